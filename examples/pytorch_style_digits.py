"""A plain PyTorch program: nothing here knows about plugrad. Run it on plugrad with

    python -m plugrad run examples/pytorch_style_digits.py
    python -m plugrad run --device ref examples/pytorch_style_digits.py --epochs 1 --subset 60 --hidden 8

(or with PyTorch itself: ``python examples/pytorch_style_digits.py``). An MLP learns the 8x8
digits of ``examples/data/digits.npz`` the way tutorials write it: a Dataset class,
``DataLoader`` workers, ``torch.device("cuda" if ... else "cpu")``, an LR scheduler, a
checkpoint of ``state_dict()``s, reloaded and checked at the end.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset, random_split

HERE = os.path.dirname(os.path.abspath(__file__))


class Digits(Dataset):
    def __init__(self, path, subset=None):
        data = np.load(path)
        self.images = data["images"].astype(np.float32) / 16.0
        self.labels = data["labels"].astype(np.int64)
        if subset:
            self.images, self.labels = self.images[:subset], self.labels[:subset]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return torch.from_numpy(self.images[i].reshape(-1)), int(self.labels[i])


class Net(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.fc2 = nn.Linear(hidden, 10)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return F.log_softmax(self.fc2(self.dropout(F.relu(self.fc1(x)))), dim=1)


def train(model, device, loader, optimizer, epoch):
    model.train()
    total = 0.0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(target)
    print(f"Train Epoch: {epoch}\tLoss: {total / len(loader.dataset):.6f}")


def test(model, device, loader):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            loss += F.nll_loss(output, target, reduction="sum").item()
            correct += output.argmax(dim=1, keepdim=True).eq(target.view_as(
                output.argmax(dim=1, keepdim=True))).sum().item()
    n = len(loader.dataset)
    print(f"Test set: Average loss: {loss / n:.4f}, Accuracy: {correct}/{n} "
          f"({100.0 * correct / n:.0f}%)")
    return correct / n


def main():
    parser = argparse.ArgumentParser(description="digits MLP, written for PyTorch")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--subset", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--save", default=None, help="checkpoint path")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--data", default=os.path.join(HERE, "data", "digits.npz"))
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dataset = Digits(args.data, args.subset)
    n_test = max(len(dataset) // 5, 1)
    train_set, test_set = random_split(dataset, [len(dataset) - n_test, n_test],
                                       generator=torch.Generator().manual_seed(args.seed))
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.workers,
                              persistent_workers=args.workers > 0)
    test_loader = DataLoader(test_set, batch_size=256)

    model = Net(args.hidden).to(device)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=0.5)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.8)
    print(f"{len(train_set)} train / {len(test_set)} test digits on {device}, "
          f"input {torch.Size([args.batch_size, 64])}")
    net = torch.compile(model) if args.compile else model  # the state dict stays model's
    for epoch in range(1, args.epochs + 1):
        train(net, device, train_loader, optimizer, epoch)
        accuracy = test(net, device, test_loader)
        scheduler.step()

    if args.save:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "epoch": args.epochs, "args": args}, args.save)
        checkpoint = torch.load(args.save, weights_only=False)
        restored = Net(checkpoint["args"].hidden).to(device)
        restored.load_state_dict(checkpoint["model"])
        same = all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                     restored.state_dict().values()))
        print(f"checkpoint {args.save}: epoch {checkpoint['epoch']}, restored exactly: {same}")
    print(f"final accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
