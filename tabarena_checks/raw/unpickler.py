"""The restricted unpickler of ``results.pkl``: allow-listed globals, bounded work, checked numpy arrays.

Unpickling is code execution, and a results.pkl can come from anyone. Three kinds of harm are
closed here, each before the object that would cause it exists:

* running code: only builtins and the numpy functions that rebuild arrays can be named;
  anything else ends the read with :class:`UnpicklingRefused` before it is imported;
* memory corruption: numpy's array constructors trust their arguments (``ndarray((1,), 'O',
  b'AAAAAAAA')`` is an object array whose element is the pointer 0x4141...). Arrays are
  built only through numpy's own pickle paths, with the dtype taken from a short list of
  plain types, the shape and the buffer checked against each other, and object arrays only
  from a list of their elements; ``numpy.ndarray`` itself cannot be called;
* unbounded work: every opcode and every element a call copies is charged to a budget, and
  a tuple nested deeper than :data:`MAX_DEPTH` is refused as it is built (hashing one, as a
  dict key, recurses in C without a limit and kills the process). After the load,
  :func:`check_graph` measures the object graph: no cycle, no nesting deeper than
  :data:`MAX_DEPTH`, and no more than :data:`MAX_EXPANDED` objects when shared references
  are counted as often as they are reached, so rendering a value later is bounded too.

The pure-Python unpickler of the standard library is used (subclassed) because it lets each
opcode be counted and BUILD be checked; real files hold a few thousand opcodes (arrays are one
opcode each), so it costs well under a millisecond per file.
"""

from __future__ import annotations

import collections
import gc
import math
import pickle
import re
from collections.abc import Callable
from typing import Any

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
#: datetime units numpy pickles in a dtype's state
_TIME_UNITS = frozenset({b"Y", b"M", b"W", b"D", b"h", b"m", b"s", b"ms", b"us", b"ns", b"ps", b"fs", b"as",
                         b"generic"})
#: the dtype descriptions numpy writes for plain (not structured) dtypes; sizes of strings must be positive
_PLAIN_DTYPE = re.compile(r"(?:b1|[iu][1248]|f(?:2|4|8|12|16)|c(?:8|16|24|32)|O[48]?|[US][1-9]\d{0,8}|[Mm]8)")


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


class _NdarrayToken:
    """What ``numpy.ndarray`` resolves to: accepted as the first argument of ``_reconstruct``, never called."""

    def __new__(cls, *args, **kwargs):
        raise UnpicklingRefused("a direct call of numpy.ndarray (arrays are only rebuilt the way numpy pickles them)")


class _Allowed:
    """An allow-listed callable, wrapped so each call is checked and charged before it runs."""

    __slots__ = ("name", "fn")

    def __init__(self, name: str, fn: Callable):
        self.name, self.fn = name, fn

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.name}>"


def _shape(shape: Any) -> int:
    """The element count of a pickled shape, after checking it is a short tuple of non-negative ints."""
    if type(shape) is not tuple or len(shape) > MAX_NDIM or any(type(n) is not int or n < 0 for n in shape):
        raise UnpicklingRefused(f"an array shape of {_brief(shape)} (a tuple of at most {MAX_NDIM} non-negative ints)")
    return math.prod(shape)


def _brief(value: Any) -> str:
    """A short description of a value met while unpickling (its repr could be huge or never end)."""
    short = _short_repr(value)
    if short is not None:
        return short
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


def _allow_list() -> dict[tuple[str, str], str]:
    """(module, name) a pickle may name -> what it gets (resolved by :meth:`RestrictedUnpickler._resolve`)."""
    out = {("numpy", "ndarray"): "ndarray", ("numpy", "dtype"): "dtype", ("_codecs", "encode"): "encode",
           ("collections", "OrderedDict"): "OrderedDict", ("collections", "defaultdict"): "defaultdict"}
    for pkg in ("numpy.core", "numpy._core"):
        out[(f"{pkg}.multiarray", "_reconstruct")] = "_reconstruct"
        out[(f"{pkg}.multiarray", "scalar")] = "scalar"
        out[(f"{pkg}.numeric", "_frombuffer")] = "_frombuffer"
    for name in ("set", "frozenset", "list", "dict", "bytearray", "bytes", "tuple", "int", "float", "complex", "str",
                 "bool"):
        out[("builtins", name)] = out[("__builtin__", name)] = name
    return out


_ALLOWED = _allow_list()


class RestrictedUnpickler(pickle._Unpickler):
    """Loads one result: builtins and checked numpy arrays only, within :data:`MAX_OPS` opcodes."""

    dispatch = dict(pickle._Unpickler.dispatch)

    def __init__(self, file, *, max_ops: int = MAX_OPS):
        super().__init__(file)
        self._source = file
        self._left = max_ops
        self._max_ops = max_ops
        #: id -> (tuple, nesting depth) of every tuple built, kept alive so ids stay unique
        self._tuples: dict[int, tuple[tuple, int]] = {}
        #: arrays made by ``_reconstruct`` that still wait for their (checked) state
        self._fresh: dict[int, Any] = {}
        #: the allow-listed globals this pickle named, resolved on first use
        self._globals: dict[tuple[str, str], Any] = {}

    # --- the loop: the standard one, with each opcode charged ----------------------------------

    def load(self):
        # frames are consecutive slices of the stream: reading straight from the file (an in-memory
        # buffer here) is the same, without a Python call per read
        self.read, self.readline = self._source.read, self._source.readline
        self.readinto = self._source.readinto
        self.metastack = []
        self.stack = []
        self.append = self.stack.append
        self.proto = 0
        read, dispatch = self.read, self.dispatch
        collecting = gc.isenabled()
        gc.disable()  # nothing loaded can be garbage yet; collections would make the load quadratic in its size
        try:
            while True:
                key = read(1)
                if not key:
                    raise EOFError
                self._left -= 1
                if self._left < 0:
                    raise UnpicklingRefused(f"a pickle of more than {self._max_ops} opcodes (a result this large "
                                            "is not a TabArena result)")
                dispatch[key[0]](self)
        except pickle._Stop as stop:
            return stop.value
        finally:
            if collecting:
                gc.enable()

    def _charge(self, n: int, what: str) -> None:
        self._left -= n
        if self._left < 0:
            raise UnpicklingRefused(f"{what} past the {self._max_ops} objects a result may build")

    # --- globals -----------------------------------------------------------------------------

    def find_class(self, module: str, name: str) -> Any:
        found = self._globals.get((module, name))
        if found is None:
            kind = _ALLOWED.get((module, name))
            if kind is None:
                raise UnpicklingRefused(f"{module}.{name}", is_global=True)
            found = self._globals[(module, name)] = self._resolve(kind)
        return found

    def persistent_load(self, pid: Any) -> Any:
        raise UnpicklingRefused(f"persistent id {_brief(pid)}", is_global=True)

    def _resolve(self, kind: str) -> Any:
        """The object a pickle gets for an allow-listed global (see :data:`_ALLOWED`)."""
        import numpy as np

        multiarray = (getattr(np, "_core", None) or np.core).multiarray
        if kind == "ndarray":
            return _NdarrayToken
        makers: dict[str, Callable[[], Callable]] = {
            "dtype": lambda: _dtype,
            "_reconstruct": lambda: self._reconstruct(multiarray._reconstruct),
            "scalar": lambda: _scalar(multiarray.scalar),
            "_frombuffer": lambda: _frombuffer,
            "encode": lambda: self._latin1_encode,
            "OrderedDict": lambda: self._copying(collections.OrderedDict),
            "defaultdict": lambda: self._defaultdict,
            "tuple": lambda: self._tuple,
            "int": lambda: _scalar_call(int, (str, bytes, bytearray, int, float, bool)),
            "float": lambda: _scalar_call(float, (str, bytes, bytearray, int, float, bool)),
            "complex": lambda: _scalar_call(complex, (str, int, float, bool, complex)),
            "str": lambda: _scalar_call(str, (str, bytes, bytearray, int, float, bool, complex, type(None))),
            "bool": lambda: _scalar_call(bool, (str, bytes, bytearray, int, float, bool, complex, type(None))),
        }
        for copied in (set, frozenset, list, dict, bytearray, bytes):
            makers[copied.__name__] = (lambda k: lambda: self._copying(k))(copied)
        return _Allowed(kind, makers[kind]())

    def _latin1_encode(self, text: Any = "", encoding: str = "latin1") -> bytes:
        """What protocol-2 pickles call to rebuild ``bytes``; any other codec is refused."""
        if encoding not in ("latin1", "latin-1") or not isinstance(text, str):
            raise UnpicklingRefused(f"_codecs.encode with {_brief(encoding)} (only latin1 rebuilds bytes)")
        self._charge(len(text) // 64, "_codecs.encode() copies")
        return text.encode("latin1")

    def _copying(self, kind: type) -> Callable:
        """``kind(iterable)``: only from a sized builtin container, its length charged to the budget."""

        def make(*args):
            if len(args) > 2 or (len(args) == 2 and kind not in (bytes, bytearray)):
                raise UnpicklingRefused(f"{kind.__name__} with {len(args)} arguments")
            if args:
                source = args[0]
                if not isinstance(source, (list, tuple, set, frozenset, dict, str, bytes, bytearray)):
                    raise UnpicklingRefused(f"{kind.__name__}({_brief(source)}) (only from a list, tuple, set, "
                                            "dict, str or bytes)")
                if len(args) == 2 and not (isinstance(source, str) and isinstance(args[1], str)):
                    raise UnpicklingRefused(f"{kind.__name__} with an encoding but no text")
                self._charge(len(source), f"{kind.__name__}() copies")
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
        self._charge(len(source), "tuple() copies")
        return self._register(tuple(source))

    # --- tuples: nesting checked as they are built ------------------------------------------

    def _register(self, value: tuple) -> tuple:
        depth = 1
        tuples = self._tuples
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

    # --- numpy -------------------------------------------------------------------------------

    def _reconstruct(self, real: Callable) -> Callable:
        import numpy as np

        def make(subtype: Any, shape: Any, typecode: Any):
            if subtype is not _NdarrayToken or shape != (0,) or typecode != b"b":
                raise UnpicklingRefused("numpy _reconstruct with arguments numpy never writes")
            array = real(np.ndarray, (0,), b"b")
            self._fresh[id(array)] = array
            return array

        return make

    def load_frame(self):
        self.read(8)

    dispatch[pickle.FRAME[0]] = load_frame

    def load_build(self):
        import numpy as np

        stack = self.stack
        state = stack.pop()
        inst = stack[-1]
        if isinstance(inst, np.ndarray):
            if self._fresh.pop(id(inst), None) is not inst:
                raise UnpicklingRefused("a second state for an array already built")
            _set_array_state(inst, state)
        elif isinstance(inst, np.dtype):
            _set_dtype_state(inst, state)
        else:
            raise UnpicklingRefused(f"setting the state of a {type(inst).__name__} (BUILD)")

    dispatch[pickle.BUILD[0]] = load_build


def _tuple_op(load: Callable) -> Callable:
    """A TUPLE* opcode followed by the nesting check of the tuple it built."""

    def run(self: RestrictedUnpickler) -> None:
        load(self)
        self._register(self.stack[-1])

    return run


def _heavy_op(load: Callable) -> Callable:
    """An opcode making a set or dict, charged as :data:`HEAVY` opcodes (an empty set is about 200 bytes)."""

    def run(self: RestrictedUnpickler) -> None:
        self._charge(HEAVY - 1, "sets and dicts")
        load(self)

    return run


for _op in (pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3):
    RestrictedUnpickler.dispatch[_op[0]] = _tuple_op(pickle._Unpickler.dispatch[_op[0]])
for _op in (pickle.EMPTY_SET, pickle.FROZENSET, pickle.EMPTY_DICT, pickle.DICT):
    RestrictedUnpickler.dispatch[_op[0]] = _heavy_op(pickle._Unpickler.dispatch[_op[0]])
del _op


def _scalar_call(kind: type, accepted: tuple[type, ...]) -> Callable:
    """``kind(*args)`` for scalar builtins, only from scalar arguments (``str(a_list)`` would render it)."""

    def make(*args):
        if len(args) > 2 or any(not isinstance(a, accepted) for a in args):
            raise UnpicklingRefused(f"{kind.__name__}({', '.join(_brief(a) for a in args)})")
        return kind(*args)

    return make


def _dtype(desc: Any = None, align: Any = False, copy: Any = True):
    """A new plain dtype (never numpy's shared instance, which a later BUILD would change for everyone)."""
    import numpy as np

    if type(desc) is not str or not _PLAIN_DTYPE.fullmatch(desc):
        raise UnpicklingRefused(f"the dtype {_brief(desc)} (only plain numeric, bool, string, datetime and object "
                                "dtypes)")
    return np.dtype(desc, align=False, copy=True)


def _set_dtype_state(dtype, state: Any) -> None:
    """Apply a pickled dtype state only when it equals the dtype's own, but for byte order and time unit."""
    canonical = dtype.__reduce__()[2]
    if type(state) is not tuple or len(state) != len(canonical):
        raise UnpicklingRefused(f"a dtype state of {_brief(state)}")
    for i, (got, want) in enumerate(zip(state, canonical)):
        if not _dtype_field_ok(i, got, want):
            raise UnpicklingRefused(f"a dtype state whose field {i} is {_brief(got)} (numpy writes {_brief(want)})")
    dtype.__setstate__(state)


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


def _set_array_state(array, state: Any) -> None:
    """An array's pickled state, applied only when dtype, shape and data agree (object data only from a list)."""
    shape, n, dtype, fortran, data = _array_state(state)
    if dtype.hasobject:
        if type(data) is not list or len(data) != n:
            raise UnpicklingRefused(f"an object array of {n} element(s) from {_brief(data)} (object arrays are only "
                                    "rebuilt from the list of their elements)")
    elif type(data) not in (bytes, bytearray) or len(data) != n * dtype.itemsize:
        raise UnpicklingRefused(f"a {dtype} array of shape {shape} from {_brief(data)} (it needs exactly "
                                f"{n * dtype.itemsize} bytes)")
    array.__setstate__((1, shape, dtype, fortran, data))


def _array_state(state: Any) -> tuple:
    """The (shape, element count, dtype, order flag, data) of an array's pickled state, after checking its framing.

    Apart from the data check so that each reads as one list of refusals, in the order they are
    met: here the tuple, its version, the shape, the dtype and the order flag; the data in the caller.
    """
    import numpy as np

    if type(state) is not tuple or len(state) not in (4, 5):
        raise UnpicklingRefused(f"an array state of {_brief(state)}")
    if len(state) == 5 and type(state[0]) is not int:
        raise UnpicklingRefused(f"an array state version of {_brief(state[0])}")
    shape, dtype, fortran, data = state[-4:]
    n = _shape(shape)
    if not isinstance(dtype, np.dtype):
        raise UnpicklingRefused(f"an array whose dtype is {_brief(dtype)}")
    if type(fortran) is not bool:
        raise UnpicklingRefused(f"an array whose order flag is {_brief(fortran)}")
    return shape, n, dtype, fortran, data


def _frombuffer(buffer: Any, dtype: Any, shape: Any, order: Any):
    """numpy's protocol-5 array path: a buffer of exactly the bytes the dtype and shape need; never objects."""
    import numpy as np

    if not isinstance(dtype, np.dtype) or dtype.hasobject:
        raise UnpicklingRefused(f"an array from a buffer with the dtype {_brief(dtype)} (object arrays are only "
                                "rebuilt from the list of their elements)")
    n = _shape(shape)
    if order not in ("C", "F"):
        raise UnpicklingRefused(f"an array order of {_brief(order)}")
    if type(buffer) not in (bytes, bytearray) or len(buffer) != n * dtype.itemsize:
        raise UnpicklingRefused(f"a {dtype} array of shape {shape} from {_brief(buffer)} (it needs exactly "
                                f"{n * dtype.itemsize} bytes)")
    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order)


def _scalar(real: Callable) -> Callable:
    import numpy as np

    def make(dtype: Any, data: Any = None):
        if not isinstance(dtype, np.dtype) or dtype.hasobject:
            raise UnpicklingRefused(f"a numpy scalar of dtype {_brief(dtype)}")
        if type(data) is not bytes or len(data) != dtype.itemsize:
            raise UnpicklingRefused(f"a {dtype} scalar from {_brief(data)} (it needs exactly {dtype.itemsize} bytes)")
        return real(dtype, data)

    return make


# --- the loaded graph --------------------------------------------------------------------------


_LEAVES = frozenset({str, int, float, bool, bytes, bytearray, complex, type(None)})


# shape: called once per object of every decoded pickle (check_graph's hot path): one dispatch on the
# container type, cheapest checks first, rather than a call per kind
def _children(value: Any):
    """(label, child) pairs of a container, or None for a leaf (object arrays are containers)."""
    kind = type(value)
    if kind in _LEAVES:
        return None
    if isinstance(value, dict):
        return (((f".{k}" if type(k) is str else f"[{_brief(k)}]"), v) for k, v in value.items())
    if kind is list or kind is tuple:
        return ((f"[{i}]", v) for i, v in enumerate(value))
    if kind is set or kind is frozenset:
        return (("{}", v) for v in value)
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.hasobject and getattr(value, "ndim", 0):
        return ((f"[{i}]", v) for i, v in enumerate(value.reshape(-1)))
    return None


# shape: one explicit-stack walk over every object a pickle decoded to; its state (the frames, the
# objects on the path, the sizes measured) lives in the loop, and per-object calls on this hot path
# would cost more than the split would make clear
def check_graph(root: Any, *, max_depth: int = MAX_DEPTH, max_expanded: int = MAX_EXPANDED) -> None:
    """Raise :class:`GraphError` when ``root`` holds a cycle, nests deeper than ``max_depth`` or expands,
    each shared reference counted where it is reached, to more than ``max_expanded`` objects.

    One pass over the distinct objects (shared ones are measured once and remembered), without
    recursion, so it is bounded by the size of what was loaded, not by what it expands to.
    """
    done: dict[int, tuple[int, int]] = {}  # id -> (expanded size, depth below)
    keep: list[Any] = []  # keeps measured objects alive so their ids stay theirs
    on_path: set[int] = set()
    top = _children(root)
    if top is None:
        return
    # frames: [object, iterator of children, label, expanded so far, depth below so far]
    frames: list[list[Any]] = [[root, top, "", 1, 0]]
    on_path.add(id(root))

    def where() -> str:
        labels = [f[2] for f in frames]
        text = "".join(labels).lstrip(".")
        return text if len(text) <= 160 else text[:100] + "..." + text[-57:]

    while frames:
        frame = frames[-1]
        for label, child in frame[1]:
            known = done.get(id(child))
            if known is None:
                if id(child) in on_path:
                    frames.append([child, iter(()), label, 0, 0])
                    raise GraphError(where(), "contains itself (a reference cycle)")
                grand = _children(child)
                if grand is None:
                    frame[3] += 1
                    continue
                if len(frames) >= max_depth:
                    frames.append([child, iter(()), label, 0, 0])
                    raise GraphError(where(), f"is nested more than {max_depth} levels deep")
                frames.append([child, grand, label, 1, 0])
                on_path.add(id(child))
                break
            size, below = known
            frame[3] += size
            frame[4] = max(frame[4], below + 1)
            if len(frames) + below > max_depth:
                frames.append([child, iter(()), label, 0, 0])
                raise GraphError(where(), f"is nested more than {max_depth} levels deep")
            if frame[3] > max_expanded:
                raise GraphError(where(), f"expands to more than {max_expanded} objects through shared references "
                                          "(a 'billion laughs' pickle)")
        else:
            frames.pop()
            obj, _, label, size, below = frame
            on_path.discard(id(obj))
            if size > max_expanded:
                frames.append(frame)
                raise GraphError(where(), f"expands to more than {max_expanded} objects through shared references "
                                          "(a 'billion laughs' pickle)")
            done[id(obj)] = (size, below)
            keep.append(obj)
            if frames:
                parent = frames[-1]
                parent[3] += size
                parent[4] = max(parent[4], below + 1)
