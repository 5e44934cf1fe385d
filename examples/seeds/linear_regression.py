"""The seeds' complete training loop: fit a line y = 2x + 1 with nn.Linear, MSELoss and SGD.

As the seed wrote it but for the import lines and the argument parsing: ``--device`` picks
the backend (default: plugrad's default device), ``--seed`` seeds the random data and the
initial weights (the seed left them unseeded), ``--epochs`` (default 100, as the seed).

Note that the seed's 100 epochs at ``lr=0.01`` only take the weight and bias part of the way
(each epoch shrinks their error by about 2%, so ~13% of the initial error is left); run
with ``--epochs 500`` to land within a few hundredths of 2 and 1.
"""
import argparse

import plugrad as torch
import plugrad.nn as nn
import plugrad.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument("--device", default=None)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--epochs", type=int, default=100)
args = parser.parse_args()
if args.device:
    torch.set_default_device(args.device)
torch.manual_seed(args.seed)

# 1. Prepare synthetic dataset
# 100 samples, 1 feature
X_train = torch.randn(100, 1)
y_train = 2 * X_train + 1 + torch.randn(100, 1) * 0.1 # y = 2x + 1 + noise

# 2. Define Model, Loss, and Optimizer
model = nn.Linear(1, 1) # Single linear layer (weights & bias)
criterion = nn.MSELoss() # Mean Squared Error loss
optimizer = optim.SGD(model.parameters(), lr=0.01) # Stochastic Gradient Descent

# 3. Training Loop
epochs = args.epochs
for epoch in range(epochs):
    # Forward Pass
    predictions = model(X_train)
    loss = criterion(predictions, y_train)

    # Backward Pass (Zero gradients, backpropagate, update)
    optimizer.zero_grad() # Clears old gradients from previous step
    loss.backward()       # Computes dL/dw and dL/db
    optimizer.step()      # Updates weights: w = w - lr * grad

    if (epoch + 1) % 20 == 0:
        print(f"Epoch [{epoch+1}/{epochs}], Loss: {loss.item():.4f}")

# 4. View learned parameters
print("\nLearned Weights:", model.weight.item())
print("Learned Bias:", model.bias.item())
