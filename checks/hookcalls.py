"""Which plugin a hook's failure or contribution came from, asked of pluggy through its public API.

pluggy re-raises a failing implementation's exception as it is, without the plugin's name, and
hands back a hook's results as a bare list. A user must be told which plugin broke, and a rule or
action must carry the name of the plugin that contributed it, yet the implementations stay as
pluggy registered them:

- :func:`watch` puts a hook-call monitor (``add_hookcall_monitoring``) on the manager: an exception
  that leaves a hook call becomes a :class:`~checks.errors.PluginError` naming the plugin whose
  implementation it came through (found in the traceback by the implementation's code object;
  a wrapper is named only when no plain implementation is there) and the hook;
- :func:`by_plugin` asks a registration hook one plugin at a time (``subset_hook_caller``), so each
  result is known to be that plugin's; each call goes through pluggy, wrappers of that plugin included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pluggy

from checks.errors import PluginError, PluginLoadError


def watch(pm: pluggy.PluginManager) -> None:
    """Name the failing plugin in every exception a hook call of ``pm`` raises (see the module)."""
    pm.add_hookcall_monitoring(_before, _after)


def _before(hook_name: str, hook_impls: list, kwargs: dict) -> None:
    """Nothing to do before a call: the monitor acts on its outcome only."""


def _after(outcome: pluggy.Result, hook_name: str, hook_impls: list, kwargs: dict) -> None:
    exc = outcome.exception
    if isinstance(exc, PluginLoadError) and not str(exc).startswith("plugin "):
        impl = culprit(exc, hook_impls)  # a declaration mistake met while the hook imported the plugin's modules
        if impl is not None:
            outcome.force_exception(PluginLoadError(f"plugin {impl.plugin_name!r}, hook {hook_name}: {exc}"))
        return
    if not isinstance(exc, Exception) or isinstance(exc, PluginError):
        return  # a clean call, an interrupt, or an error that already names its plugin
    impl = culprit(exc, hook_impls)
    if impl is not None:
        error = PluginError(f"plugin {impl.plugin_name!r} raised in hook {hook_name}: {type(exc).__name__}: {exc}")
        error.__cause__ = exc
        outcome.force_exception(error)


def culprit(exc: BaseException, impls: list) -> Any:
    """The implementation among ``impls`` that ``exc`` was raised in or through, None when none was (pluggy's
    own errors, say): the innermost plain one on the traceback, else the innermost wrapper."""
    codes = {getattr(impl.function, "__code__", None): impl for impl in impls}
    on_path = []
    tb = exc.__traceback__
    while tb is not None:
        impl = codes.get(tb.tb_frame.f_code)
        if impl is not None:
            on_path.append(impl)
        tb = tb.tb_next
    plain = [impl for impl in on_path if not (impl.wrapper or impl.hookwrapper)]
    return (plain or on_path or [None])[-1]


def by_plugin(pm: pluggy.PluginManager, hook: str, **kwargs: Any) -> Iterator[tuple[str, Any]]:
    """``(plugin name, result)`` of each plugin implementing ``hook``, in pluggy's call order (the plugin
    registered last first), each plugin's implementations called through ``pm`` without the others'."""
    impls = getattr(pm.hook, hook).get_hookimpls()
    plain = [impl for impl in reversed(impls) if not (impl.wrapper or impl.hookwrapper)]
    plugins: list[Any] = []
    for impl in [*plain, *(impl for impl in impls if impl.wrapper or impl.hookwrapper)]:
        if not any(impl.plugin is p for p in plugins):
            plugins.append(impl.plugin)
    everyone = pm.get_plugins()
    for plugin in plugins:
        caller = pm.subset_hook_caller(hook, remove_plugins=[p for p in everyone if p is not plugin])
        for result in caller(**kwargs):
            yield pm.get_name(plugin), result
