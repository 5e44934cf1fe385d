"""The backend registry: pluggy finds backends, then gets out of the way.

pluggy is consulted when backends are registered or removed, never per op: each backend's
kernel table is resolved once (a contributed kernel, else the backend's own method, whose
default is the composite fallback) into plain attributes of a :class:`KernelTable`, and
every tensor holds its table. An op is then ``tensor._k.mul(a, b)``.
"""
from __future__ import annotations

import importlib
import os
import threading
import warnings

import numpy as np

from plugrad.backends.contract import (CONTRACT_VERSION, DTYPE_NAMES, Backend, optional_kernels,
                                       required_primitives)

ENTRY_POINT_GROUP = "plugrad.backends"
BUILTIN_PLUGINS = ("plugrad.backends.numpy", "plugrad.backends.reference",
                   "plugrad.backends.cupy")


#: Called with each backend the first time its kernel table is built (``plugrad.core.random``
#: seeds it from the global seed), so the registry needs nothing from the floors above it.
first_use_hooks: list = []


class BackendError(RuntimeError):
    """A backend could not be registered or used."""


def _reraise_interrupts(exc: BaseException) -> None:
    """A plugin's failure is contained, whatever it raises, except the user's Ctrl-C."""
    if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
        raise exc


def probe_available(backend: Backend) -> tuple[bool, str, BaseException | None]:
    """``(available, reason, exception)``: ``is_available()`` and ``unavailable_reason()``,
    with an exception they raise turned into the reason instead of escaping."""
    try:
        if backend.is_available():
            return True, "", None
    except BaseException as exc:  # noqa: BLE001 - a plugin must never break plugrad
        _reraise_interrupts(exc)
        return False, f"is_available() raised {type(exc).__name__}: {exc}", exc
    try:
        return False, str(backend.unavailable_reason() or "no reason given"), None
    except BaseException as exc:  # noqa: BLE001
        _reraise_interrupts(exc)
        return False, f"unavailable_reason() raised {type(exc).__name__}: {exc}", exc


class KernelTable:
    """A backend's resolved kernels as plain attributes (the per-op hot path)."""

    def __init__(self, backend: Backend, contributed: dict):
        self.backend = backend
        self.name = backend.name
        self.device_type = backend.device_type
        self.dtypes = frozenset(backend.dtypes)
        self.sources: dict[str, str] = {}
        for op in required_primitives() + optional_kernels():
            if op in contributed:
                fn, plugin = contributed[op]
                self.sources[op] = plugin
            else:
                fn = getattr(backend, op)
                own = getattr(type(backend), op) is not getattr(Backend, op)
                self.sources[op] = backend.name if own else "composite"
            setattr(self, op, fn)
        self.dtype_of = backend.dtype_of
        #: ``backend.device_count()``, read once: device indices are checked against it
        self.device_count = 1

    def __repr__(self) -> str:
        return f"<KernelTable {self.name} ({self.device_type})>"


class Registry:
    """Registered backends by device type, their origins, and plugins that failed."""

    def __init__(self):
        import pluggy  # here, not at import: pluggy pulls in importlib.metadata (~20 ms)

        from plugrad.backends import hooks
        self.pm = pluggy.PluginManager(hooks.PROJECT)
        self.pm.add_hookspecs(hooks.BackendSpecs)
        self._lock = threading.RLock()
        self.backends: dict[str, Backend] = {}
        self.origins: dict[str, str] = {}
        self.failures: list[tuple[str, str, str]] = []
        self.provided: dict[str, tuple[str, ...]] = {}  # plugin name -> device types it added
        self.seeded: dict[str, Backend] = {}  # device type -> backend whose generator is set
        self._tables: dict[str, KernelTable] = {}
        self._entry_points_loaded = False
        for module_name in BUILTIN_PLUGINS:
            module = importlib.import_module(module_name)
            self.register_plugin(module, name=module_name, origin="built-in")

    # ------------------------------------------------------------------ plugins
    def register_plugin(self, plugin, name: str | None = None, origin: str = "plugin") -> str:
        """Register a pluggy plugin (module or object) and the backends its
        ``plugrad_backends`` hook provides; all or nothing. Returns the plugin's name."""
        with self._lock:
            name = self.pm.register(plugin, name=name)
            if name is None:
                raise BackendError(f"plugin {plugin!r} is blocked")
            added: list[str] = []
            try:
                for backend in self._hook_backends(plugin, name):
                    self.add_backend(backend, origin=origin)
                    added.append(backend.device_type)
            except BaseException:
                self._drop(added)
                self.pm.unregister(plugin)
                raise
            self.provided[name] = tuple(added)
            self._tables.clear()
            return name

    def _hook_backends(self, plugin, name: str) -> list:
        """What ``plugin``'s own ``plugrad_backends`` hook implementation returns: a list
        (or tuple) of backends; anything else is refused, naming the plugin."""
        out = []
        for impl in self.pm.hook.plugrad_backends.get_hookimpls():
            if impl.plugin is plugin:
                got = impl.function()
                if not isinstance(got, (list, tuple)):
                    raise BackendError(
                        f"plugin {name!r}: its plugrad_backends() hook returned "
                        f"{type(got).__name__ if got is not None else 'None'}; it must return "
                        f"a list of plugrad.backends.Backend instances")
                out.extend(got)
        return out

    def unregister_plugin(self, plugin) -> None:
        """Remove a plugin (object or name) and the backends it provided."""
        with self._lock:
            name = plugin if isinstance(plugin, str) else self.pm.get_name(plugin)
            if name is None or not self.pm.has_plugin(name):
                raise BackendError(f"plugin {plugin!r} is not registered")
            self._drop(self.provided.pop(name, ()))
            self.pm.unregister(name=name)
            self._tables.clear()

    def _drop(self, device_types) -> None:
        for dev in device_types:
            self.backends.pop(dev, None)
            self.origins.pop(dev, None)
            self.seeded.pop(dev, None)

    def add_backend(self, backend: Backend, origin: str = "plugin") -> None:
        """Check a backend against the contract and make its device type available."""
        if not isinstance(backend, Backend):
            raise BackendError(f"{backend!r} is not a plugrad.backends.Backend")
        if backend.contract_version != CONTRACT_VERSION:
            raise BackendError(
                f"backend {backend.name!r} was written for contract version "
                f"{backend.contract_version}, this plugrad implements version {CONTRACT_VERSION}")
        missing = sorted(getattr(type(backend), "__abstractmethods__", ()))
        if missing:
            raise BackendError(f"backend {backend.name!r} lacks required primitives: "
                               f"{', '.join(missing)}")
        declared = backend.dtypes
        unknown = sorted(str(d) for d in declared if d not in DTYPE_NAMES) if isinstance(
            declared, (set, frozenset, list, tuple)) else None
        if unknown is None or unknown or not declared:
            got = f"unknown dtype names {', '.join(map(repr, unknown))}" if unknown else \
                f"dtypes={declared!r}"
            raise BackendError(f"backend {backend.name!r} declares {got}; dtypes must be a "
                               f"non-empty set of these names: {', '.join(DTYPE_NAMES)}")
        taken = self.backends.get(backend.device_type)
        if taken is not None and taken is not backend:
            raise BackendError(
                f"device type {backend.device_type!r} is already served by backend "
                f"{taken.name!r} ({self.origins.get(backend.device_type)}); "
                f"{backend.name!r} ({origin}) cannot take it")
        self.backends[backend.device_type] = backend
        self.origins[backend.device_type] = origin
        self._tables.pop(backend.device_type, None)

    def load_entry_points(self) -> None:
        """Load third-party plugins once; a failing one is reported, never fatal."""
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        if os.environ.get("PLUGRAD_DISABLE_PLUGIN_AUTOLOAD", "") not in ("", "0"):
            return
        blocked = {n.strip() for n in os.environ.get("PLUGRAD_BLOCK_PLUGINS", "").split(",")
                   if n.strip()}
        import importlib.metadata
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in blocked or self.pm.has_plugin(ep.name):
                continue
            dist = getattr(ep.dist, "name", None) or "unknown distribution"
            try:
                plugin = ep.load()
                if self.pm.is_registered(plugin):  # e.g. a built-in also declared as entry point
                    continue
                self.register_plugin(plugin, name=ep.name, origin=f"{dist} (entry point {ep.name})")
            except BaseException as exc:  # noqa: BLE001 - a plugin must never break plugrad
                _reraise_interrupts(exc)  # SystemExit at import is contained too
                message = f"{type(exc).__name__}: {exc}"
                self.failures.append((ep.name, dist, message))
                warnings.warn(f"plugrad: backend plugin {ep.name!r} from {dist} failed to load "
                              f"and was skipped: {message}", RuntimeWarning, stacklevel=2)

    # ------------------------------------------------------------------ lookup
    def table(self, device_type: str) -> KernelTable:
        """The resolved kernel table serving ``device_type`` (cached)."""
        table = self._tables.get(device_type)
        if table is not None:
            return table
        with self._lock:
            return self._build(device_type)

    def _build(self, device_type: str) -> KernelTable:
        backend = self.backends.get(device_type)
        if backend is None:
            self.load_entry_points()
            backend = self.backends.get(device_type)
        if backend is None:
            known = ", ".join(sorted(self.backends)) or "none"
            raise BackendError(f"no backend serves device type {device_type!r} "
                               f"(registered device types: {known}){self.failure_note()}"
                               f"{_env_hint(device_type)}")
        ok, reason, cause = probe_available(backend)
        if not ok:
            raise BackendError(f"device type {device_type!r} (backend {backend.name!r}) is "
                               f"not available here: {reason}{_env_hint(device_type)}") from cause
        table = KernelTable(backend, self._contributions(backend))
        if self.seeded.get(device_type) is not backend:  # only on first use, never on rebuilds
            _check_host_transfer(backend)
            for hook in first_use_hooks:  # random numbers: start from the global seed
                hook(backend)
            self.seeded[device_type] = backend
        table.device_count = _device_count(backend)
        self._tables[device_type] = table
        return table

    def _contributions(self, backend: Backend) -> dict:
        """Kernels other plugins contribute for ``backend``: the first (tryfirst) one wins."""
        found: dict = {}
        for impl in reversed(self.pm.hook.plugrad_kernels.get_hookimpls()):
            kernels = impl.function(backend=backend)
            for op, fn in (kernels or {}).items():
                if op not in found:
                    found[op] = (fn, impl.plugin_name)
        return found

    def kernel_sources(self, device_type: str) -> dict[str, str]:
        """Where each kernel of ``device_type`` comes from (the backend's name, "composite", or
        a contributing plugin), also for a backend that cannot run here."""
        backend = self.backends[device_type]
        table = self._tables.get(device_type) or KernelTable(backend,
                                                             self._contributions(backend))
        return dict(table.sources)

    def failure_note(self) -> str:
        """The plugins that failed to load, for the errors a user meets later ("" if none)."""
        if not self.failures:
            return ""
        listed = "; ".join(f"{name!r} from {dist}: {message}"
                           for name, dist, message in self.failures)
        return f"; plugins that failed to load: {listed}"

    def available_tables(self) -> list[KernelTable]:
        """Tables of every registered backend that can run here (one whose availability
        check raises, or that is refused at first use, is left out)."""
        self.load_entry_points()
        out = []
        for device_type, backend in sorted(self.backends.items()):
            if probe_available(backend)[0]:
                try:
                    out.append(self.table(device_type))
                except BackendError:
                    continue
        return out


def _device_count(backend: Backend) -> int:
    try:
        n = int(backend.device_count())
    except Exception as exc:  # noqa: BLE001
        raise BackendError(f"backend {backend.name!r}: device_count() raised "
                           f"{type(exc).__name__}: {exc}") from exc
    if n < 1:
        raise BackendError(f"backend {backend.name!r}: device_count() is {n}, expected >= 1")
    return n


def _check_host_transfer(backend: Backend) -> None:
    """Every declared dtype must cross to the host (``print``, ``tolist``, ``.numpy()`` use
    ``to_numpy``): a tiny round trip per dtype, once, when the device is first used. A
    dtype NumPy lacks crosses as the NumPy type holding its values (bfloat16: float32).

    plugrad's own backends are left out: the conformance suite certifies them in CI, and the
    round trip would load the NumPy backend's bfloat16 (ml_dtypes, about a second) in every
    program at its first tensor. A backend from a plugin, or a subclass defined elsewhere,
    is checked."""
    if type(backend).__module__.startswith("plugrad.backends."):
        return
    for name in sorted(backend.dtypes):
        host = np.dtype("float32" if name == "bfloat16" else name)
        try:
            back = backend.to_numpy(backend.from_numpy(np.zeros(2, host), name, None))
            ok = isinstance(back, np.ndarray) and back.dtype == host and back.shape == (2,)
            got = f"a {type(back).__name__}" + (f" of dtype {back.dtype}, shape {back.shape}"
                                                 if isinstance(back, np.ndarray) else "")
        except Exception as exc:  # noqa: BLE001
            ok, got = False, f"an error: {type(exc).__name__}: {exc}"
        if not ok:
            raise BackendError(
                f"backend {backend.name!r} declares dtype {name!r} but cannot carry it to the "
                f"host: to_numpy(from_numpy(zeros(2), {name!r})) gave {got}; the contract "
                f"wants a NumPy array of dtype {host} (bfloat16 crosses as float32); remove "
                f"{name!r} from dtypes or fix the transfer")


def _env_hint(device_type: str) -> str:
    """Point at ``PLUGRAD_DEVICE`` when that is where the device came from."""
    spec = os.environ.get("PLUGRAD_DEVICE", "")
    if spec.partition(":")[0] == device_type:
        return f"; the default device comes from the environment: PLUGRAD_DEVICE={spec!r}"
    return ""


_registry: Registry | None = None
_registry_lock = threading.Lock()


def get_registry() -> Registry:
    global _registry
    if _registry is None:
        with _registry_lock:
            if _registry is None:
                _registry = Registry()
    return _registry
