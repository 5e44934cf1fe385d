"""The seeds' first programs: a tensor, a recorded graph, a gradient, a device move."""
import plugrad as torch

# create a Tensor with three numbers
x = torch.tensor([1.0, 2.0, 3.0])
print(x)

a = torch.tensor(2.0)
b = torch.tensor(3.0)
c = torch.tensor(4.0)

# PyTorch records each step
result = a * b + c
print(result)

# tell PyTorch to track this number for gradients
x = torch.tensor(3.0, requires_grad=True)

# do a simple calculation
y = x * x

# ask PyTorch to calculate the gradient
y.backward()

print(x.grad)

# move the Tensor to the GPU if one is available
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.tensor([1.0, 2.0, 3.0]).to(device)
print(x)
