"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict`` (registered children by key)."""
from __future__ import annotations

import operator
from collections import OrderedDict

from plugrad.nn.modules.module import Module, _addindent


def _index(op: str, idx, n: int) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"{op}: index {idx} is out of range for a container of {n} modules")
    return idx % n


class _IndexedModules(Module):
    """Children stored under the keys "0", "1", ... (shared by Sequential and ModuleList)."""

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        return list(self._modules.values())[_index(type(self).__name__, idx, len(self))]

    def __setitem__(self, idx, module) -> None:
        key = list(self._modules)[_index(type(self).__name__, idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx) -> None:
        keys = list(self._modules)
        doomed = keys[idx] if isinstance(idx, slice) else [
            keys[_index(type(self).__name__, idx, len(self))]]
        for k in doomed:
            del self._modules[k]
        self._renumber()

    def _renumber(self) -> None:
        values = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(values):
            self._modules[str(i)] = m

    def append(self, module: Module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(values):
            self.add_module(str(i), m)

    def pop(self, index=-1):
        m = self[index]
        del self[index]
        return m


class Sequential(_IndexedModules):
    """Modules called in order, each on the previous one's output."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, m in args[0].items():
                self.add_module(key, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return super().__getitem__(idx)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other).__name__} is given.")
        return Sequential(*self, *other)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input


class ModuleList(_IndexedModules):
    """A list of modules whose parameters the owner registers; it has no ``forward``."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return super().__getitem__(idx)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other) -> ModuleList:
        return ModuleList(list(self) + list(other))

    def __repr__(self) -> str:
        """Runs of repeated identical reprs collapse to ``(0-2): 3 x Linear(...)``."""
        items = [repr(m) for m in self]
        if not items:
            return "ModuleList()"
        lines, start = [], 0
        for i in range(1, len(items) + 1):
            if i == len(items) or items[i] != items[start]:
                key = str(start) if i - start == 1 else f"{start}-{i - 1}"
                count = "" if i - start == 1 else f"{i - start} x "
                lines.append(f"({key}): {count}{_addindent(items[start], 2)}")
                start = i
        return "ModuleList(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules by name, registered in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules) -> None:
        items = modules.items() if hasattr(modules, "items") else modules
        for key, m in items:
            self[key] = m


class ParameterList(Module):
    """A list of parameters, registered as ``"0"``, ``"1"``, ... (tensors are wrapped)."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def _as_param(self, value):
        from plugrad.nn.parameter import Parameter
        return value if isinstance(value, Parameter) else Parameter(value)

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList(list(self._parameters.values())[idx])
        return self._parameters[str(_index("ParameterList", idx, len(self)))]

    def __setitem__(self, idx, value) -> None:
        self.register_parameter(str(_index("ParameterList", idx, len(self))),
                                self._as_param(value))

    def append(self, value) -> ParameterList:
        self.register_parameter(str(len(self)), self._as_param(value))
        return self

    def extend(self, values) -> ParameterList:
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({i}): Parameter containing: [{p.dtype!r} of size {tuple(p.shape)}]"
                         for i, p in enumerate(self))


class ParameterDict(Module):
    """A dict of parameters by name, registered in insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return self._parameters[key]

    def __setitem__(self, key: str, value) -> None:
        from plugrad.nn.parameter import Parameter
        self.register_parameter(key, value if isinstance(value, Parameter) else Parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def __contains__(self, key) -> bool:
        return key in self._parameters

    def keys(self):
        return self._parameters.keys()

    def items(self):
        return self._parameters.items()

    def values(self):
        return self._parameters.values()

    def update(self, parameters) -> None:
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for key, p in items:
            self[key] = p

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): Parameter containing: [{p.dtype!r} of size {tuple(p.shape)}]"
                         for k, p in self.items())
