"""The seeds' custom model: ``SimpleClassifier`` (an ``nn.Module``) and one forward pass.

As the seed wrote the class but for the import lines; the forward pass on random data and
the argument parsing are additions so that the program shows something when it runs.
``--device`` picks the backend (default: plugrad's default device).
"""
import argparse

import plugrad as torch
import plugrad.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--device", default=None)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
if args.device:
    torch.set_default_device(args.device)
torch.manual_seed(args.seed)


class SimpleClassifier(nn.Module):
    def __init__(self, input_dim, output_dim):
        super(SimpleClassifier, self).__init__()
        # Define layers
        self.linear1 = nn.Linear(input_dim, 64)
        self.relu = nn.ReLU()
        self.linear2 = nn.Linear(64, output_dim)

    def forward(self, x):
        # Define forward flow
        out = self.linear1(x)
        out = self.relu(out)
        out = self.linear2(out)
        return out


# a batch of 8 random inputs with 20 features, classified into 3 classes
model = SimpleClassifier(input_dim=20, output_dim=3)
x = torch.randn(8, 20)
out = model(x)
print(model)
print("Output shape:", out.shape)
