"""The seeds' training loop: learn Celsius -> Fahrenheit from two examples.

As the seed wrote it but for the import line. ``--steps`` shortens it (e.g. on ``ref``);
``--device`` picks the backend (default: plugrad's default device).
"""
import argparse

import plugrad as torch

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=100000)
parser.add_argument("--device", default=None)
args = parser.parse_args()
if args.device:
    torch.set_default_device(args.device)

# our examples: Celsius inputs and the correct Fahrenheit answers
celsius = torch.tensor([0.0, 100.0])
fahrenheit = torch.tensor([32.0, 212.0])

# start with random guesses, and track them for gradients
weight = torch.tensor(0.0, requires_grad=True)
bias = torch.tensor(0.0, requires_grad=True)

learning_rate = 0.0001

# repeat the learning loop many times
for step in range(args.steps):
    # make a prediction with the current guess
    prediction = weight * celsius + bias

    # measure how wrong we are (the error)
    error = ((prediction - fahrenheit) ** 2).mean()

    # ask PyTorch to calculate the gradients
    error.backward()

    # take a small step downhill, then reset for the next round
    with torch.no_grad():
        weight -= learning_rate * weight.grad
        bias -= learning_rate * bias.grad
        weight.grad.zero_()
        bias.grad.zero_()

print(weight, bias)
