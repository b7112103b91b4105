"""The restricted unpickler of ``results.pkl``: allow-listed globals, bounded work, checked numpy arrays.

Unpickling is code execution, and a results.pkl can come from anyone. Three kinds of harm are
closed here, each before the object that would cause it exists:

* running code: only builtins, the numpy functions that rebuild arrays and the container
  subclasses of :data:`CONTAINER_SUBCLASSES` (rebuilt as their plain base type, their own
  module never imported) can be called. Any other global becomes an inert placeholder that is
  never imported, called or given state; :func:`load` reports where each one sits (its field
  path) so the reader can refuse the file or, where processing never reads that field, warn;
* memory corruption: numpy's array constructors trust their arguments (``ndarray((1,), 'O',
  b'AAAAAAAA')`` is an object array whose element is the pointer 0x4141...). Arrays are
  built only through numpy's own pickle paths, with the dtype taken from a short list of
  plain types, the shape and the buffer checked against each other, and object arrays only
  from a list of their elements; ``numpy.ndarray`` itself cannot be called. Until the load
  ends, arrays and dtypes are held by pending stand-ins of this module, so a pickle's BUILD
  reaches only checks of ours, never numpy's unchecked ``__setstate__``;
* unbounded work: every opcode and every element a call copies is charged to a budget, and
  a tuple nested deeper than :data:`MAX_DEPTH` is refused (hashing one, as a dict key,
  recurses in C without a limit and kills the process). After the load, the walk that replaces
  the stand-ins (:func:`settle`) also measures the object graph: no cycle, no nesting deeper
  than :data:`MAX_DEPTH`, and no more than :data:`MAX_EXPANDED` objects when shared references
  are counted as often as they are reached, so rendering a value later is bounded too.

Two loaders share these checks. The fast one is the standard library's C unpickler, used when
a scan of the opcodes (:func:`scan`) shows the pickle within the budget, with few tuple
opcodes (so no tuple can nest deep enough to hurt) and only the opcodes real results use. The
careful one is the pure-Python unpickler, subclassed so that each opcode is counted and each
tuple's nesting measured as it is built; it reads whatever the scan sends its way, and every
pickle the fast loader fails on, so that a refusal always names what was refused.
"""

from __future__ import annotations

import collections
import gc
import io
import itertools
import math
import pickle
import pickletools
import re
from collections.abc import Callable
from typing import Any, NamedTuple

#: opcodes one file may execute (each makes at most one object; a set or dict counts as
#: :data:`HEAVY` opcodes, its size in memory); real files have about a thousand
MAX_OPS = 2_000_000
HEAVY = 4
#: deepest nesting of containers accepted; real results nest fewer than 10 levels
MAX_DEPTH = 100
#: objects a value may expand to when each shared reference is counted where it is reached
MAX_EXPANDED = 10_000_000
#: dimensions of one array (numpy's own limit is 64)
MAX_NDIM = 32
#: tuple-building opcodes (and calls, which may build tuples) above which the fast loader is not used: a tuple
#: nested this deep hashes in well under a megabyte of C stack; real results hold a few hundred
FAST_TUPLES = 5_000
#: datetime units numpy pickles in a dtype's state
_TIME_UNITS = frozenset(
    {b"Y", b"M", b"W", b"D", b"h", b"m", b"s", b"ms", b"us", b"ns", b"ps", b"fs", b"as", b"generic"}
)
#: the dtype descriptions numpy writes for plain (not structured) dtypes; sizes of strings must be positive
_PLAIN_DTYPE = re.compile(r"(?:b1|[iu][1248]|f(?:2|4|8|12|16)|c(?:8|16|24|32)|O[48]?|[US][1-9]\d{0,8}|[Mm]8)")

#: container subclasses that real results hold, rebuilt as their plain base type without importing their module.
#: AutoGluon 1.6 (required by TabArena 0.1.0: autogluon.core >=1.6,<1.7) wraps a model's ``params`` in
#: ``ParamsDict`` and its ``ag_args_fit`` in ``ParamsAuxDict``, which reach ``method_metadata.info`` and its
#: bag's ``bagged_info`` and ``children_info``; both subclass ``MutationDeprecatedDict`` and pickle as
#: ``cls(dict(self))`` (a REDUCE with one plain dict), the form the copying ``dict`` accepts. AutoGluon before 1.6
#: pickled plain dicts there (docs/tabarena-data.md lists the versions checked).
_AG_ABSTRACT = "autogluon.core.models.abstract"
CONTAINER_SUBCLASSES: dict[tuple[str, str], str] = {
    (f"{_AG_ABSTRACT}._mutation_deprecated_dict", "MutationDeprecatedDict"): "dict",
    (f"{_AG_ABSTRACT}._mutation_deprecated_dict", "ParamsDict"): "dict",
    (f"{_AG_ABSTRACT}._auxiliary_params", "ParamsAuxDict"): "dict",
}


class UnpicklingRefused(pickle.UnpicklingError):
    """The pickle asks for something outside the allow-list; ``what`` names it (``module.name`` for a global)."""

    def __init__(self, what: str, *, is_global: bool = False):
        self.what = what
        self.is_global = is_global
        super().__init__(what)


class GraphError(ValueError):
    """The loaded value is too large, too deep or cyclic; ``field`` says where (``a.b[3]``)."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field or 'the result'} {reason}")


class Unread(NamedTuple):
    """A global outside the allow-list, met at ``field`` (``method_metadata.info.x``; empty for the whole value).

    Its value was never built: the loaded result holds None in its place.
    """

    field: str
    name: str


class Loaded(NamedTuple):
    """What :func:`load` returns: the value, and every global outside the allow-list with where it sat."""

    value: Any
    unread: list[Unread]


# --- stand-ins: what a pickle gets instead of a live object --------------------------------------


class _Sealed:
    """A stand-in a pickle may hold but never give state to: BUILD on it is refused."""

    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        raise UnpicklingRefused(f"setting the state of {self!r} (BUILD)")


class _Allowed(_Sealed):
    """An allow-listed callable, wrapped so each call is checked and charged before it runs."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable):
        self.name, self.fn = name, fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _direct_ndarray(*args, **kwargs):
    raise UnpicklingRefused("a direct call of numpy.ndarray (arrays are only rebuilt the way numpy pickles them)")


class _PendingArray(_Sealed):
    """An array between numpy's ``_reconstruct`` and its state: the state is checked, then the array is built."""

    __slots__ = ("array", "make")

    def __init__(self, make: Callable):
        self.make, self.array = make, None

    def __setstate__(self, state: Any) -> None:
        if self.array is not None:
            raise UnpicklingRefused("a second state for an array already built")
        self.array = _array_from_state(self.make, state)

    def __repr__(self) -> str:
        return "an array"


class _BuiltArray(tuple):
    """An array numpy's protocol-5 path built (:func:`_frombuffer`), boxed until the settle walk unboxes it.

    A one-item tuple, made by C: the fast loader makes one per array, where a class of our own would run its
    ``__init__``. Sealed like the other stand-ins: it has no state to set, and it is no dict key or set member.
    """

    __slots__ = ()

    def __setstate__(self, state: Any) -> None:
        raise UnpicklingRefused("a second state for an array already built")

    def __repr__(self) -> str:
        return "an array"


class _PendingDtype(_Sealed):
    """A dtype numpy's pickle is still describing; its state is applied once, if it matches the dtype's own."""

    __slots__ = ("dtype", "stated")

    def __init__(self, dtype: Any):
        self.dtype, self.stated = dtype, False

    def __setstate__(self, state: Any) -> None:
        if self.stated:
            raise UnpicklingRefused("a second state for a dtype")
        _set_dtype_state(self.dtype, state)
        self.stated = True

    def __repr__(self) -> str:
        return "a dtype"


class _UnreadValue:
    """What calling, instantiating or filling a global outside the allow-list gives: a value never built."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __call__(self, *args, **kwargs) -> _UnreadValue:  # what it returned is as unread as itself
        return _UnreadValue(self.name)

    # a pickle fills what it built with these opcodes; the content is dropped with the value
    def __setstate__(self, state: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, item: Any) -> None:
        pass

    def extend(self, items: Any) -> None:
        pass

    def add(self, item: Any) -> None:
        pass


class _SealedType(type):
    """The metaclass of unread globals: nothing may set attributes on them."""

    def __setattr__(cls, name: str, value: Any) -> None:
        raise UnpicklingRefused(f"setting {name!r} on {cls.name} (BUILD)")


class _UnreadGlobal(metaclass=_SealedType):
    """A global outside the allow-list (one subclass per name and load): calling it or NEWOBJ gives an
    :class:`_UnreadValue`; it is a type only because the C unpickler's NEWOBJ requires one."""

    name = "?"

    def __new__(cls, *args, **kwargs):
        return _UnreadValue(cls.name)


def _brief(value: Any) -> str:
    """A short description of a value met while unpickling (its repr could be huge or never end)."""
    short = _short_repr(value)
    if short is not None:
        return short
    if isinstance(value, (_PendingArray, _BuiltArray, _PendingDtype, _Allowed)):
        return repr(value)
    if type(value).__module__.startswith("numpy") and hasattr(value, "descr") and hasattr(value, "str"):
        return f"dtype({value.str!r})"
    if isinstance(value, (tuple, list, dict, str, bytes, bytearray)):
        return f"a {type(value).__name__} of length {len(value)}"
    return f"a {type(value).__name__}"


def _short_repr(value: Any) -> str | None:
    """The repr of a value whose repr is known to be short (None, a bool, a float, a small int, a short
    string), else None: exact types only, so a subclass's own ``__repr__`` is never run."""
    if value is None or type(value) in (bool, float):
        return repr(value)
    if type(value) is int:
        return repr(value) if value.bit_length() < 64 else f"an int of {value.bit_length()} bits"
    if type(value) in (str, bytes) and len(value) <= 40:
        return repr(value)
    return None


def _shape(shape: Any) -> int:
    """The element count of a pickled shape, after checking it is a short tuple of non-negative ints."""
    if type(shape) is tuple and len(shape) == 1 and type(shape[0]) is int and shape[0] >= 0:
        return shape[0]  # the usual vector, checked without the loop below
    if type(shape) is not tuple or len(shape) > MAX_NDIM or any(type(n) is not int or n < 0 for n in shape):
        raise UnpicklingRefused(f"an array shape of {_brief(shape)} (a tuple of at most {MAX_NDIM} non-negative ints)")
    return math.prod(shape)


def _real_dtype(value: Any, what: str) -> Any:
    """The dtype a pickle passed (always one of our pending dtypes), or a refusal naming ``what`` it was for."""
    if type(value) is not _PendingDtype:
        raise UnpicklingRefused(f"{what} whose dtype is {_brief(value)}")
    return value.dtype


# --- the globals a pickle may name, and the budget they charge -----------------------------------


def _allow_list() -> dict[tuple[str, str], str]:
    """(module, name) a pickle may name -> what it gets (resolved by :meth:`_Globals._resolve`)."""
    out = {
        ("numpy", "ndarray"): "ndarray",
        ("numpy", "dtype"): "dtype",
        ("_codecs", "encode"): "encode",
        ("collections", "OrderedDict"): "OrderedDict",
        ("collections", "defaultdict"): "defaultdict",
    }
    for pkg in ("numpy.core", "numpy._core"):
        out[(f"{pkg}.multiarray", "_reconstruct")] = "_reconstruct"
        out[(f"{pkg}.multiarray", "scalar")] = "scalar"
        out[(f"{pkg}.numeric", "_frombuffer")] = "_frombuffer"
    for name in (
        "set",
        "frozenset",
        "list",
        "dict",
        "bytearray",
        "bytes",
        "tuple",
        "int",
        "float",
        "complex",
        "str",
        "bool",
    ):
        out[("builtins", name)] = out[("__builtin__", name)] = name
    out.update(CONTAINER_SUBCLASSES)
    return out


_ALLOWED = _allow_list()


class _Globals:
    """The allow-listed globals of one load, resolved on first use, and the budget their calls charge."""

    def __init__(self, budget: int, max_ops: int):
        self.left = budget
        self.max_ops = max_ops
        #: id -> (tuple, nesting depth) of every tuple a call built, kept alive so ids stay unique
        self.tuples: dict[int, tuple[tuple, int]] = {}
        self.found: dict[tuple[str, str], Any] = {}

    def find(self, module: str, name: str) -> Any:
        found = self.found.get((module, name))
        if found is None:
            kind = _ALLOWED.get((module, name))
            if kind is None:
                qualified = f"{module}.{name}"
                found = _SealedType("unread", (_UnreadGlobal,), {"name": qualified})
            else:
                found = self._resolve(kind)
            self.found[(module, name)] = found
        return found

    def charge(self, n: int, what: str) -> None:
        self.left -= n
        if self.left < 0:
            raise UnpicklingRefused(f"{what} past the {self.max_ops} objects a result may build")

    def _resolve(self, kind: str) -> _Allowed:
        """The object a pickle gets for an allow-listed global (see :data:`_ALLOWED`)."""
        made = _MAKERS[kind](self)
        return made if isinstance(made, _Allowed) else _Allowed(kind, made)

    def _latin1_encode(self, text: Any = "", encoding: str = "latin1") -> bytes:
        """What protocol-2 pickles call to rebuild ``bytes``; any other codec is refused."""
        if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
            raise UnpicklingRefused(f"_codecs.encode with {_brief(encoding)} (only latin1 rebuilds bytes)")
        self.charge(len(text) // 64, "_codecs.encode() copies")
        return text.encode("latin1")

    def _copying(self, kind: type) -> Callable:
        """``kind(iterable)``: only from a sized builtin container, its length charged to the budget."""

        def make(*args):
            if len(args) > 2 or (len(args) == 2 and kind not in (bytes, bytearray)):
                raise UnpicklingRefused(f"{kind.__name__} with {len(args)} arguments")
            if args:
                source = args[0]
                if not isinstance(source, (list, tuple, set, frozenset, dict, str, bytes, bytearray)):
                    raise UnpicklingRefused(
                        f"{kind.__name__}({_brief(source)}) (only from a list, tuple, set, dict, str or bytes)"
                    )
                if len(args) == 2 and not (isinstance(source, str) and isinstance(args[1], str)):
                    raise UnpicklingRefused(f"{kind.__name__} with an encoding but no text")
                self.charge(len(source), f"{kind.__name__}() copies")
            return kind(*args)

        return make

    def _defaultdict(self, factory: Any = None, *args):
        if args:
            raise UnpicklingRefused("collections.defaultdict with initial items as arguments")
        if factory is not None and not isinstance(factory, _Allowed):
            raise UnpicklingRefused(f"collections.defaultdict with the factory {_brief(factory)}")
        return collections.defaultdict(factory)

    def _tuple(self, source: Any = ()) -> tuple:
        if not isinstance(source, (list, tuple)):
            raise UnpicklingRefused(f"tuple({_brief(source)}) (only from a list or tuple)")
        self.charge(len(source), "tuple() copies")
        return self.register(tuple(source))

    def register(self, value: tuple) -> tuple:
        """``value``, after checking and recording how deep its tuples nest."""
        depth = 1
        tuples = self.tuples
        for item in value:
            if type(item) is tuple:
                known = tuples.get(id(item))
                inner = known[1] if known is not None and known[0] is item else 1
                if inner >= depth:
                    depth = inner + 1
        if depth > MAX_DEPTH:
            raise UnpicklingRefused(f"tuples nested more than {MAX_DEPTH} deep")
        if depth > 1:
            tuples[id(value)] = (value, depth)
        return value


def _numpy_maker(name: str) -> Callable[[_Globals], Callable]:
    """A maker of the checked form of numpy's ``multiarray`` function ``name`` (numpy imported on first use)."""

    def make(_: _Globals) -> Callable:
        import numpy as np

        real = getattr((getattr(np, "_core", None) or np.core).multiarray, name)
        return _reconstruct(real) if name == "_reconstruct" else _scalar(real)

    return make


def _called_directly(name: str, fn: Callable) -> _Allowed:
    """An :class:`_Allowed` whose call is ``fn`` itself, without the wrapper's frame: for the globals that every
    array of a result calls (one per array and one per dtype). Shared by every load: it holds no state."""
    kind = type(f"_Allowed_{name}", (_Allowed,), {"__slots__": (), "__call__": staticmethod(fn)})
    return kind(name, fn)


#: kind (a value of :data:`_ALLOWED`) -> what makes the callable a pickle gets for it
_MAKERS: dict[str, Callable[[_Globals], Callable]] = {
    "ndarray": lambda g: _direct_ndarray,
    "dtype": lambda g: _DTYPE,
    "_reconstruct": _numpy_maker("_reconstruct"),
    "scalar": _numpy_maker("scalar"),
    "_frombuffer": lambda g: _FROMBUFFER,
    "encode": lambda g: g._latin1_encode,
    "OrderedDict": lambda g: g._copying(collections.OrderedDict),
    "defaultdict": lambda g: g._defaultdict,
    "tuple": lambda g: g._tuple,
    "int": lambda g: _scalar_call(int, (str, bytes, bytearray, int, float, bool)),
    "float": lambda g: _scalar_call(float, (str, bytes, bytearray, int, float, bool)),
    "complex": lambda g: _scalar_call(complex, (str, int, float, bool, complex)),
    "str": lambda g: _scalar_call(str, (str, bytes, bytearray, int, float, bool, complex, type(None))),
    "bool": lambda g: _scalar_call(bool, (str, bytes, bytearray, int, float, bool, complex, type(None))),
    **{k.__name__: (lambda k: lambda g: g._copying(k))(k) for k in (set, frozenset, list, dict, bytearray, bytes)},
}


# --- the careful loader: the pure-Python unpickler, each opcode charged --------------------------


class RestrictedUnpickler(pickle._Unpickler):
    """Loads one result: builtins and checked numpy arrays only, within :data:`MAX_OPS` opcodes."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, *, max_ops: int = MAX_OPS):
        super().__init__(file)
        self._source = file
        self._globals = _Globals(max_ops, max_ops)

    def load(self):
        # frames are consecutive slices of the stream: reading straight from the file (an in-memory
        # buffer here) is the same, without a Python call per read
        self.read, self.readline = self._source.read, self._source.readline
        self.readinto = self._source.readinto
        self.metastack = []
        self.stack = []
        self.append = self.stack.append
        self.proto = 0
        read, dispatch, budget = self.read, self.dispatch, self._globals
        collecting = gc.isenabled()
        gc.disable()  # nothing loaded can be garbage yet; collections would make the load quadratic in its size
        try:
            while True:
                key = read(1)
                if not key:
                    raise EOFError
                budget.left -= 1
                if budget.left < 0:
                    raise UnpicklingRefused(
                        f"a pickle of more than {budget.max_ops} opcodes (a result this large is not a TabArena result)"
                    )
                dispatch[key[0]](self)
        except pickle._Stop as stop:
            return stop.value
        finally:
            if collecting:
                gc.enable()

    def find_class(self, module: str, name: str) -> Any:
        return self._globals.find(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise UnpicklingRefused(f"persistent id {_brief(pid)}", is_global=True)

    def load_frame(self):
        self.read(8)

    dispatch[pickle.FRAME[0]] = load_frame

    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if not isinstance(inst, (_Sealed, _BuiltArray, _UnreadValue)):
            raise UnpicklingRefused(f"setting the state of a {type(inst).__name__} (BUILD)")
        inst.__setstate__(state)

    dispatch[pickle.BUILD[0]] = load_build


def _tuple_op(load: Callable) -> Callable:
    """A TUPLE* opcode followed by the nesting check of the tuple it built."""

    def run(self: RestrictedUnpickler) -> None:
        load(self)
        self._globals.register(self.stack[-1])

    return run


def _heavy_op(load: Callable) -> Callable:
    """An opcode making a set or dict, charged as :data:`HEAVY` opcodes (an empty set is about 200 bytes)."""

    def run(self: RestrictedUnpickler) -> None:
        self._globals.charge(HEAVY - 1, "sets and dicts")
        load(self)

    return run


_TUPLE_OPS = (pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)
_HEAVY_OPS = (pickle.EMPTY_SET, pickle.FROZENSET, pickle.EMPTY_DICT, pickle.DICT)
for _op in _TUPLE_OPS:
    RestrictedUnpickler.dispatch[_op[0]] = _tuple_op(pickle._Unpickler.dispatch[_op[0]])
for _op in _HEAVY_OPS:
    RestrictedUnpickler.dispatch[_op[0]] = _heavy_op(pickle._Unpickler.dispatch[_op[0]])
del _op


# --- the fast loader: the C unpickler, after a scan of the opcodes -------------------------------


class _FastUnpickler(pickle.Unpickler):
    """The C unpickler with the same globals; :func:`scan` has charged its opcodes and bounded its tuples."""

    def __init__(self, file, budget: int):
        super().__init__(file)
        self._globals = _Globals(budget, MAX_OPS)

    def find_class(self, module: str, name: str) -> Any:
        return self._globals.find(module, name)

    def persistent_load(self, pid: Any) -> Any:
        raise UnpicklingRefused(f"persistent id {_brief(pid)}", is_global=True)


def _opcode_steps() -> list[int]:
    """For each opcode byte, how the scan steps over it: ``n >= 1`` bytes in all, or a negative code
    (:data:`_LEN1`, :data:`_LEN4`, :data:`_LEN8`: a length of that many bytes, then the data;
    :data:`_LINES`: two lines; :data:`_TUPLE`: one byte that may build a tuple; :data:`_HEAVY`: one byte
    that makes a set or dict; :data:`_LONG_PUT`, :data:`_STOP`), or :data:`_CAREFUL` where the fast loader
    must not be used.
    """
    # protocol-0 text opcodes other than GLOBAL, extensions, persistent ids and out-of-band buffers: real results
    # never hold them, and the careful loader reads (or refuses) them with its exact message
    careful = {
        "INT",
        "LONG",
        "STRING",
        "UNICODE",
        "FLOAT",
        "GET",
        "PUT",
        "INST",
        "OBJ",
        "EXT1",
        "EXT2",
        "EXT4",
        "PERSID",
        "BINPERSID",
        "NEXT_BUFFER",
        "READONLY_BUFFER",
        "POP_MARK",
        "DUP",
    }
    lengths = {
        pickletools.TAKEN_FROM_ARGUMENT1: _LEN1,
        pickletools.TAKEN_FROM_ARGUMENT4: _LEN4,
        pickletools.TAKEN_FROM_ARGUMENT4U: _LEN4,
        pickletools.TAKEN_FROM_ARGUMENT8U: _LEN8,
    }
    steps = [_CAREFUL] * 256
    for op in pickletools.opcodes:
        if op.name in careful:
            continue
        arg = op.arg
        if arg is None:
            steps[ord(op.code)] = 1
        elif arg.n >= 0:
            steps[ord(op.code)] = 1 + arg.n
        elif arg.n == pickletools.UP_TO_NEWLINE:
            steps[ord(op.code)] = _LINES  # GLOBAL: module and name, one line each
        else:
            steps[ord(op.code)] = lengths[arg.n]
    for op in (*_TUPLE_OPS, pickle.REDUCE, pickle.NEWOBJ, pickle.NEWOBJ_EX):  # each one byte long
        steps[op[0]] = _TUPLE
    for op in _HEAVY_OPS:
        steps[op[0]] = _HEAVY
    steps[pickle.LONG_BINPUT[0]] = _LONG_PUT
    steps[pickle.STOP[0]] = _STOP
    return steps


_LEN1, _LEN4, _LEN8, _LINES, _LONG_PUT, _STOP, _TUPLE, _HEAVY, _CAREFUL = -1, -4, -8, -2, -3, -5, -6, -7, -9
_STEPS = _opcode_steps()


# shape: one loop over every opcode of every file read (the fast loader's only Python-level cost per opcode).
# Each statement per opcode costs as much here as a tenth of the C unpickler's whole load, so the opcodes are
# counted by the for loop itself, the end of the payload is found by the IndexError of reading past it, and
# only the rarer opcodes (tuples, sets and dicts) add to a count of their own
def scan(payload: bytes) -> int | None:
    """The budget the opcodes of ``payload`` cost, or None when the careful loader must read it.

    None when the pickle uses an opcode real results never hold, ends early, costs more than
    :data:`MAX_OPS`, has more than :data:`FAST_TUPLES` opcodes that may build a tuple, or memoizes at
    an index past the budget spent so far (the C unpickler sizes its memo by the largest index, and
    the budget spent bounds the objects made).
    """
    steps = _STEPS
    pos = tuples = heavy = 0
    try:
        for ops in itertools.count():  # the opcodes before this one
            step = steps[payload[pos]]
            if step > 0:
                pos += step
            elif step == _LEN1:
                pos += 2 + payload[pos + 1]
            elif step == _TUPLE:
                tuples += 1
                pos += 1
            elif step == _HEAVY:
                heavy += 1
                pos += 1
            elif step == _LEN4 or step == _LEN8:
                pos += 1 - step + int.from_bytes(payload[pos + 1 : pos + 1 - step], "little")
            elif step == _STOP:
                cost = ops + 1 + heavy * (HEAVY - 1)  # a set or dict costs HEAVY, any other opcode 1
                return cost if cost <= MAX_OPS and tuples <= FAST_TUPLES else None
            else:
                pos = _rare_step(payload, pos, step, ops + 1 + heavy * (HEAVY - 1))
                if pos < 0:
                    return None
    except IndexError:  # the pickle ends before its STOP (pos never goes below 0)
        return None


def _rare_step(payload: bytes, pos: int, step: int, spent: int) -> int:
    """Where the opcode at ``pos`` ends for the steps :func:`scan` meets a few times per file, or -1 when the
    fast loader must not read it: a GLOBAL whose two lines do not end, a LONG_BINPUT past the ``spent``
    budget (the C unpickler sizes its memo by the largest index), an opcode real results never hold."""
    if step == _LINES:  # GLOBAL: module and name, one line each; never a step backwards
        first = payload.find(b"\n", pos)
        return (payload.find(b"\n", first + 1) + 1 if first >= 0 else 0) or -1
    if step == _LONG_PUT and int.from_bytes(payload[pos + 1 : pos + 5], "little") <= spent:
        return pos + 5
    return -1


def load(payload: bytes) -> Loaded:
    """The value pickled in ``payload``, checked; raises :class:`UnpicklingRefused` or :class:`GraphError`.

    The C unpickler reads it when :func:`scan` allows; anything it fails on is read again by the
    careful loader, whose refusal (or value) is the answer.
    """
    value = _MISSING
    cost = scan(payload)
    if cost is not None:
        collecting = gc.isenabled()
        gc.disable()
        try:
            value = _FastUnpickler(io.BytesIO(payload), MAX_OPS - cost).load()
        except Exception:  # read again by the careful loader, for the exact refusal
            value = _MISSING
        finally:
            if collecting:
                gc.enable()
    if value is _MISSING:
        value = RestrictedUnpickler(io.BytesIO(payload)).load()
    unread: list[Unread] = []
    return Loaded(settle(value, unread), unread)


_MISSING = object()


# --- numpy ---------------------------------------------------------------------------------------


def _reconstruct(real: Callable) -> Callable:
    """numpy's ``_reconstruct(ndarray, (0,), b'b')``, the only call it writes: a pending array awaiting its state."""

    def make(subtype: Any, shape: Any, typecode: Any):
        if not (isinstance(subtype, _Allowed) and subtype.name == "ndarray") or shape != (0,) or typecode != b"b":
            raise UnpicklingRefused("numpy _reconstruct with arguments numpy never writes")
        return _PendingArray(real)

    return make


def _array_from_state(make: Callable, state: Any):
    """An array built from its pickled state, only when dtype, shape and data agree (object data only from a list)."""
    import numpy as np

    shape, n, dtype, fortran, data = _array_state(state)
    if dtype.hasobject:
        if type(data) is not list or len(data) != n:
            raise UnpicklingRefused(
                f"an object array of {n} element(s) from {_brief(data)} (object arrays are only "
                "rebuilt from the list of their elements)"
            )
    elif type(data) not in (bytes, bytearray) or len(data) != n * dtype.itemsize:
        raise UnpicklingRefused(
            f"a {dtype} array of shape {shape} from {_brief(data)} (it needs exactly {n * dtype.itemsize} bytes)"
        )
    array = make(np.ndarray, (0,), b"b")
    array.__setstate__((1, shape, dtype, fortran, data))
    return array


def _array_state(state: Any) -> tuple:
    """The (shape, element count, dtype, order flag, data) of an array's pickled state, after checking its framing.

    Apart from the data check so that each reads as one list of refusals, in the order they are
    met: here the tuple, its version, the shape, the dtype and the order flag; the data in the caller.
    """
    if type(state) is not tuple or len(state) not in (4, 5):
        raise UnpicklingRefused(f"an array state of {_brief(state)}")
    if len(state) == 5 and type(state[0]) is not int:
        raise UnpicklingRefused(f"an array state version of {_brief(state[0])}")
    shape, dtype, fortran, data = state[-4:]
    n = _shape(shape)
    dtype = _real_dtype(dtype, "an array")
    if type(fortran) is not bool:
        raise UnpicklingRefused(f"an array whose order flag is {_brief(fortran)}")
    return shape, n, dtype, fortran, data


def _scalar_call(kind: type, accepted: tuple[type, ...]) -> Callable:
    """``kind(*args)`` for scalar builtins, only from scalar arguments (``str(a_list)`` would render it)."""

    def make(*args):
        if len(args) > 2 or any(not isinstance(a, accepted) for a in args):
            raise UnpicklingRefused(f"{kind.__name__}({', '.join(_brief(a) for a in args)})")
        return kind(*args)

    return make


def _dtype(desc: Any = None, align: Any = False, copy: Any = True) -> _PendingDtype:
    """A new plain dtype (never numpy's shared instance, which a later BUILD would change for everyone)."""
    import numpy as np

    if type(desc) is not str or not _PLAIN_DTYPE.fullmatch(desc):
        raise UnpicklingRefused(
            f"the dtype {_brief(desc)} (only plain numeric, bool, string, datetime and object dtypes)"
        )
    return _PendingDtype(np.dtype(desc, align=False, copy=True))


def _set_dtype_state(dtype, state: Any) -> None:
    """Apply a pickled dtype state only when it equals the dtype's own, but for byte order and time unit."""
    canonical = _canonical_state(dtype)
    if type(state) is not tuple or len(state) != len(canonical):
        raise UnpicklingRefused(f"a dtype state of {_brief(state)}")
    for i, (got, want) in enumerate(zip(state, canonical)):
        if not _dtype_field_ok(i, got, want):
            raise UnpicklingRefused(f"a dtype state whose field {i} is {_brief(got)} (numpy writes {_brief(want)})")
    dtype.__setstate__(state)


_CANONICAL: dict[str, tuple] = {}


def _canonical_state(dtype) -> tuple:
    """The state numpy pickles for ``dtype``, remembered by its description (byte order, kind, size and
    time unit: all a plain dtype has) for the first 256 descriptions met."""
    state = _CANONICAL.get(dtype.str)
    if state is None:
        state = dtype.__reduce__()[2]
        if len(_CANONICAL) < 256:
            _CANONICAL[dtype.str] = state
    return state


def _dtype_field_ok(i: int, got: Any, want: Any) -> bool:
    """Field ``i`` of a pickled dtype state may differ from numpy's own only in byte order and time unit."""
    if i == 1:  # byte order: only between the orders numpy knows, never onto a byte-order-free type
        return got == want if want == "|" else got in ("<", ">", "=")
    if i == 8:  # datetime metadata: (None, (unit, count, 1, 1))
        return _time_metadata_ok(got)
    return type(got) is type(want) and got == want


def _time_metadata_ok(got: Any) -> bool:
    """``(None, (unit, count, 1, 1))`` with a unit numpy knows and a count up to a million."""
    if not (type(got) is tuple and len(got) == 2 and got[0] is None and type(got[1]) is tuple and len(got[1]) == 4):
        return False
    unit, count, *rest = got[1]
    return unit in _TIME_UNITS and type(count) is int and 1 <= count <= 1_000_000 and tuple(rest) == (1, 1)


def _frombuffer(buffer: Any, dtype: Any, shape: Any, order: Any) -> _BuiltArray:
    """numpy's protocol-5 array path: a buffer of exactly the bytes the dtype and shape need; never objects."""
    import numpy as np

    if type(dtype) is not _PendingDtype or dtype.dtype.hasobject:
        raise UnpicklingRefused(
            f"an array from a buffer with the dtype {_brief(dtype)} (object arrays are only "
            "rebuilt from the list of their elements)"
        )
    dtype = dtype.dtype
    n = _shape(shape)
    if order not in ("C", "F"):
        raise UnpicklingRefused(f"an array order of {_brief(order)}")
    if type(buffer) not in (bytes, bytearray) or len(buffer) != n * dtype.itemsize:
        raise UnpicklingRefused(
            f"a {dtype} array of shape {shape} from {_brief(buffer)} (it needs exactly {n * dtype.itemsize} bytes)"
        )
    array = np.frombuffer(buffer, dtype=dtype)
    return _BuiltArray((array if len(shape) == 1 else array.reshape(shape, order=order),))


def _scalar(real: Callable) -> Callable:
    def make(dtype: Any, data: Any = None):
        if type(dtype) is not _PendingDtype or dtype.dtype.hasobject:
            raise UnpicklingRefused(f"a numpy scalar of dtype {_brief(dtype)}")
        dtype = dtype.dtype
        if type(data) is not bytes or len(data) != dtype.itemsize:
            raise UnpicklingRefused(f"a {dtype} scalar from {_brief(data)} (it needs exactly {dtype.itemsize} bytes)")
        return real(dtype, data)

    return make


#: what a pickle naming numpy's ``dtype`` or ``_frombuffer`` gets (see :func:`_called_directly`)
_DTYPE = _called_directly("dtype", _dtype)
_FROMBUFFER = _called_directly("_frombuffer", _frombuffer)


# --- after the load: stand-ins replaced, the graph measured --------------------------------------


_LEAVES = frozenset({str, int, float, bool, bytes, bytearray, complex, type(None)})
_CONTAINERS = frozenset({dict, list, tuple, set, frozenset, collections.OrderedDict, collections.defaultdict})
#: what :meth:`_Settling.value` returns as the depth below a value that is no container (it adds no level)
_FLAT = -1


# shape: the one walk over every object a pickle decoded to, run on every file read; each child is tested
# for a leaf inline, since a call per element would cost more than the walk's own work
class _Settling:
    """One walk over a loaded value that settles it and measures it.

    Settling replaces every stand-in: a pending array or dtype by what it holds, an unread global by
    None (recorded with its field path); tuples holding a stand-in are rebuilt. Measuring refuses
    (:class:`GraphError`, naming the field) a cycle, nesting deeper than :data:`MAX_DEPTH` and more than
    :data:`MAX_EXPANDED` objects when shared references are counted as often as they are reached, so
    rendering a value later is bounded too. Each container is visited once (a shared one is measured
    once and remembered), so the walk is bounded by what was loaded, not by what it expands to; it
    recurses at most :data:`MAX_DEPTH` levels.
    """

    def __init__(self, unread: list[Unread]):
        self.unread = unread
        self.done: dict[int, tuple[Any, int, int]] = {}  # id -> (settled value, expanded size, levels below)
        self.on_path: set[int] = set()
        self.keep: list[Any] = []  # keeps visited objects alive so their ids stay theirs

    def value(self, value: Any, where: tuple, depth: int) -> tuple[Any, int, int]:
        """``(settled value, expanded size, levels below)`` of a value that is no leaf, at nesting ``depth``."""
        kind = type(value)
        if kind is _BuiltArray:
            return value[0], 1, _FLAT
        if kind is _PendingArray:
            if value.array is None:
                raise UnpicklingRefused("an array without its state")
            array = value.array
            if array.dtype.hasobject and array.ndim:
                return self.container(array, where, depth)
            return array, 1, _FLAT
        if kind is _PendingDtype:
            return value.dtype, 1, _FLAT
        if kind is _UnreadValue or (isinstance(value, type) and issubclass(value, _UnreadGlobal)):
            self.unread.append(Unread(_field(where), value.name))
            return None, 1, _FLAT
        if kind in _CONTAINERS:
            return self.container(value, where, depth)
        return value, 1, _FLAT

    def container(self, value: Any, where: tuple, depth: int) -> tuple[Any, int, int]:
        original = id(value)
        known = self.done.get(original)
        if known is not None:
            if depth - 1 + known[2] > MAX_DEPTH:
                raise GraphError(_path(where), f"is nested more than {MAX_DEPTH} levels deep")
            return known
        if original in self.on_path:
            raise GraphError(_path(where), "contains itself (a reference cycle)")
        if depth > MAX_DEPTH:
            raise GraphError(_path(where), f"is nested more than {MAX_DEPTH} levels deep")
        self.on_path.add(original)
        self.keep.append(value)
        if type(value) is tuple:
            settled, size, below = self.tuple(value, where, depth)
        elif type(value) in (set, frozenset):
            settled, (size, below) = value, self.members(value, where, depth)
        else:  # a dict, a list, or an object array (settled in place through its flat view)
            flat = value if type(value) in _CONTAINERS else value.reshape(-1)
            pairs = flat.items() if isinstance(flat, dict) else enumerate(flat)
            settled, (size, below) = value, self.items(flat, pairs, where, depth)
        self.on_path.discard(original)
        self.done[original] = measured = (settled, size, below)
        return measured

    def items(self, target: Any, pairs: Any, where: tuple, depth: int) -> tuple[int, int]:
        """Settle each (key, item) of ``pairs`` in place in ``target``; the (expanded size, levels below)."""
        size, below = 1, 0
        dicts = isinstance(target, dict)
        for key, item in pairs:
            if dicts and type(key) not in _LEAVES:
                self.key(key)
            kind = type(item)
            if kind in _LEAVES:
                size += 1
                continue
            if kind is _BuiltArray:
                target[key] = item[0]  # the usual array, settled as value() would, without a call each
                size += 1
                continue
            new, count, under = self.value(item, (where, key), depth + 1)
            if new is not item:
                target[key] = new
            size += count
            below = max(below, under + 1)
            if size > MAX_EXPANDED:
                raise GraphError(_path(where), _EXPANDS)
        return size, below

    def tuple(self, value: tuple, where: tuple, depth: int) -> tuple[tuple, int, int]:
        """``value`` (or a new tuple when one of its items was a stand-in), its expanded size and levels below."""
        size, below, items, changed = 1, 0, [], False
        for i, item in enumerate(value):
            if type(item) in _LEAVES:
                size += 1
                items.append(item)
                continue
            new, count, under = self.value(item, (where, i), depth + 1)
            changed = changed or new is not item
            items.append(new)
            size += count
            below = max(below, under + 1)
            if size > MAX_EXPANDED:
                raise GraphError(_path(where), _EXPANDS)
        if not changed:
            return value, size, below
        rebuilt = tuple(items)
        self.keep.append(rebuilt)
        return rebuilt, size, below

    def members(self, value: Any, where: tuple, depth: int) -> tuple[int, int]:
        """The (expanded size, levels below) of a set; a stand-in cannot be replaced in a member, so one is refused."""
        size, below = 1, 0
        for item in value:
            if type(item) in _LEAVES:
                size += 1
                continue
            self.key(item)
            _, count, under = self.value(item, (where, _IN_SET), depth + 1)
            size += count
            below = max(below, under + 1)
            if size > MAX_EXPANDED:
                raise GraphError(_path(where), _EXPANDS)
        return size, below

    def key(self, key: Any) -> None:
        """A dict key or set member: stand-ins cannot be replaced there, so one found is refused."""
        pending, looked = [key], set()
        while pending:
            item = pending.pop()
            if isinstance(item, (_Sealed, _BuiltArray, _UnreadValue)) or isinstance(item, type):
                raise UnpicklingRefused(f"{_brief(item)} as a dict key or set member")
            if type(item) in (tuple, frozenset) and id(item) not in looked:
                looked.add(id(item))
                pending.extend(item)


_EXPANDS = f"expands to more than {MAX_EXPANDED} objects through shared references (a 'billion laughs' pickle)"


def settle(value: Any, unread: list[Unread]) -> Any:
    """``value`` settled and measured (see :class:`_Settling`); unread globals are added to ``unread``."""
    if type(value) in _LEAVES:
        return value
    return _Settling(unread).value(value, (), 1)[0]


def _field(where: tuple) -> str:
    """``method_metadata.info[2]`` from the (parent, key) chain of a walk."""
    parts = []
    while where:
        where, key = where
        parts.append(_label(key))
    return "".join(reversed(parts)).lstrip(".")


def _path(where: tuple) -> str:
    """:func:`_field`, shortened to at most 160 characters for a refusal."""
    text = _field(where)
    return text if len(text) <= 160 else text[:100] + "..." + text[-57:]


#: the key of a set's members in a field path (they have no position)
_IN_SET = object()


def _label(key: Any) -> str:
    """One step of a field path: ``.name`` for a string key, ``{}`` inside a set, ``[3]`` otherwise."""
    if type(key) is str:
        return f".{key}"
    return "{}" if key is _IN_SET else f"[{_brief(key)}]"
