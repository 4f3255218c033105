"""Plain data classes for the start-up path, without the cost of :mod:`dataclasses`.

The hook and a one-round ``check`` start a fresh interpreter each time, so start-up is
part of the product (issue 14: a valid finding write within 2x a bare interpreter).
:func:`dataclasses.dataclass` costs more than the rest of judging a write: importing it
pulls in :mod:`inspect`, and each decorated class is introspected and compiled
(measured: about 4 million instructions a class, 30 classes on the hook's path).
:func:`record` builds the same ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``) from the class's annotations with one small ``exec`` a class, and type
checkers treat it as a dataclass (PEP 681). Fields are read from ``__annotations__``
keys only (never evaluated); defaults are class attributes or :func:`field`;
``__post_init__`` runs after ``__init__`` as with dataclasses.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover
    import sys
    from collections.abc import Callable
    from typing import Any, TypeVar

    if sys.version_info >= (3, 11):
        from typing import dataclass_transform
    else:  # typeshed's typing_extensions: checking only, nothing imported at run time
        from typing_extensions import dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_kw: object) -> object:
        return lambda f: f

_MISSING = object()


class Field:
    """A field's default factory (``field(default_factory=list)``)."""

    __slots__ = ("default_factory",)

    def __init__(self, default_factory: Callable[[], Any]) -> None:
        self.default_factory = default_factory


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is made anew for every instance."""
    return Field(default_factory)  # type: ignore[return-value]


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record."""


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[T] | None = None, *, frozen: bool = False,
           eq: bool = True) -> Any:
    """Decorate a class as a record: ``@record`` or ``@record(frozen=True)``."""

    def wrap(klass: type[T]) -> type[T]:
        return _build(klass, frozen, eq)

    return wrap if cls is None else wrap(cls)


def _fields(klass: type) -> list[str]:
    names: list[str] = []
    for base in reversed(klass.__mro__[1:]):
        names.extend(n for n in getattr(base, "__record_fields__", ()) if n not in names)
    own = klass.__dict__.get("__annotations__", {})
    names.extend(n for n, kind in own.items()
                 if n not in names and not str(kind).startswith(("ClassVar", "typing.ClassVar")))
    return names


def _build(klass: type[T], frozen: bool, eq: bool) -> type[T]:
    names = _fields(klass)
    defaults: dict[str, object] = {}
    factories: dict[str, Field] = {}
    for name in names:
        value = klass.__dict__.get(name, _MISSING)
        if isinstance(value, Field):
            factories[name] = value
            delattr(klass, name)
        elif value is not _MISSING:
            defaults[name] = value
        else:
            for base in klass.__mro__[1:]:
                inherited = getattr(base, "__record_defaults__", {})
                if name in inherited:
                    defaults[name] = inherited[name]
                if name in getattr(base, "__record_factories__", {}):
                    factories[name] = base.__record_factories__[name]  # type: ignore
    params, body = [], []
    env: dict[str, object] = {"__setattr": object.__setattr__}
    for name in names:
        if name in factories:
            env[f"__f_{name}"] = factories[name].default_factory
            params.append(f"{name}=__MISSING")
            value = f"__f_{name}() if {name} is __MISSING else {name}"
        elif name in defaults:
            env[f"__d_{name}"] = defaults[name]
            params.append(f"{name}=__d_{name}")
            value = name
        else:
            params.append(name)
            value = name
        body.append(f"__setattr(self, {name!r}, {value})" if frozen
                    else f"self.{name} = {value}")
    env["__MISSING"] = _MISSING
    if hasattr(klass, "__post_init__"):
        body.append("self.__post_init__()")
    src = (f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
           if names else "def __init__(self):\n    pass")
    exec(src, env)  # noqa: S102 - a generated __init__, as dataclasses does
    init = env["__init__"]
    init.__qualname__ = f"{klass.__qualname__}.__init__"  # type: ignore[attr-defined]
    klass.__init__ = init  # type: ignore[method-assign, assignment]
    klass.__record_fields__ = tuple(names)  # type: ignore[attr-defined]
    klass.__record_defaults__ = defaults  # type: ignore[attr-defined]
    klass.__record_factories__ = factories  # type: ignore[attr-defined]
    klass.__match_args__ = tuple(names)  # type: ignore[attr-defined, misc]
    if "__repr__" not in klass.__dict__:
        klass.__repr__ = _repr  # type: ignore[method-assign]
    if eq and "__eq__" not in klass.__dict__:
        klass.__eq__ = _eq  # type: ignore[method-assign]
        if frozen:
            klass.__hash__ = _hash  # type: ignore[method-assign]
        else:
            klass.__hash__ = None  # type: ignore[assignment]
    if frozen:
        klass.__setattr__ = _frozen_setattr  # type: ignore[method-assign]
        klass.__delattr__ = _frozen_setattr  # type: ignore[method-assign]
    return klass


def _values(self: object) -> tuple[object, ...]:
    return tuple(getattr(self, n) for n in type(self).__record_fields__)  # type: ignore


def _repr(self: object) -> str:
    parts = ", ".join(f"{n}={getattr(self, n)!r}"
                      for n in type(self).__record_fields__)  # type: ignore[attr-defined]
    return f"{type(self).__qualname__}({parts})"


def _eq(self: object, other: object) -> bool:
    if other.__class__ is not self.__class__:
        return NotImplemented  # type: ignore[no-any-return]  # typeshed: NotImplementedType(Any)
    return _values(self) == _values(other)


def _hash(self: object) -> int:
    return hash(_values(self))


def _frozen_setattr(self: object, name: str, value: object = None) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def fields(klass_or_obj: object) -> tuple[str, ...]:
    """The field names of a record class or instance."""
    klass = klass_or_obj if isinstance(klass_or_obj, type) else type(klass_or_obj)
    return klass.__record_fields__  # type: ignore[attr-defined, no-any-return]


def replace(obj: T, **changes: object) -> T:
    """A copy of record *obj* with *changes* (as :func:`dataclasses.replace`)."""
    klass = type(obj)
    names = klass.__record_fields__  # type: ignore[attr-defined]
    unknown = set(changes) - set(names)
    if unknown:
        raise TypeError(f"{klass.__qualname__} has no field {sorted(unknown)[0]!r}")
    values = {n: changes[n] if n in changes else getattr(obj, n) for n in names}
    return klass(**values)


def asdict(obj: object) -> dict[str, Any]:
    """A record's fields as a dict; lists and dicts are copied (one level), so the dict
    can be changed without changing the record; nested records are converted too."""
    return {n: _copy(getattr(obj, n)) for n in fields(obj)}


def _copy(value: object) -> Any:
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if hasattr(type(value), "__record_fields__"):
        return asdict(value)
    return value
