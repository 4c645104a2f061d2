"""Which Java samples may share a warm test JVM: those whose class files reach nothing outside
themselves.

A warm test JVM runs sample after sample, each in a class loader of its own (see
``javarunner.java``'s server). A sample's own classes, their static fields included, go with its
loader; what could carry over to the next sample is what the JDK keeps for the whole JVM:
threads left running, system properties, the default locale or time zone, ``System.out``,
shutdown hooks, finalizers, caches reached by reflection, files. A sample may go to the warm JVM
only when every class, field and method its class files name (their constant pools, read here
without loading them) is one of its own or on :data:`PURE_CLASSES` / :data:`PURE_MEMBERS`: the
JDK's value types, collections, sequential streams, ``Math``, exceptions, ``String.format``.
Anything else (``Thread``, ``System.exit``, ``System.setOut``, reflection, ``java.io.File``,
``Runtime``, ``Locale.setDefault``, a parallel stream, a ``finalize`` method, a native method)
sends the sample to a JVM of its own, as before: the gate decides only where a sample runs, never
its verdict.

The lists are allow-lists: a JDK class that is not named is refused, so a JDK class added later,
or one overlooked, costs speed, not isolation.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["PURE_CLASSES", "PURE_MEMBERS", "refusal"]

PURE_CLASSES = frozenset({
    # values and text
    "java/lang/Object", "java/lang/String", "java/lang/StringBuilder", "java/lang/StringBuffer",
    "java/lang/CharSequence", "java/lang/AbstractStringBuilder", "java/lang/Math", "java/lang/StrictMath",
    "java/lang/Number", "java/lang/Integer", "java/lang/Long", "java/lang/Short", "java/lang/Byte",
    "java/lang/Character", "java/lang/Boolean", "java/lang/Double", "java/lang/Float",
    "java/lang/Comparable", "java/lang/Iterable", "java/lang/Enum", "java/lang/Record",
    "java/lang/Cloneable",
    # exceptions a solution or a test throws and catches
    "java/lang/Throwable", "java/lang/Exception", "java/lang/RuntimeException", "java/lang/Error",
    "java/lang/AssertionError", "java/lang/IllegalArgumentException", "java/lang/IllegalStateException",
    "java/lang/ArithmeticException", "java/lang/IndexOutOfBoundsException",
    "java/lang/ArrayIndexOutOfBoundsException", "java/lang/StringIndexOutOfBoundsException",
    "java/lang/NullPointerException", "java/lang/NumberFormatException",
    "java/lang/UnsupportedOperationException", "java/lang/ClassCastException",
    "java/lang/NegativeArraySizeException", "java/lang/CloneNotSupportedException",
    "java/lang/StackOverflowError", "java/lang/OutOfMemoryError", "java/lang/NoSuchFieldError",
    "java/util/NoSuchElementException", "java/util/ConcurrentModificationException",
    "java/util/InputMismatchException", "java/util/EmptyStackException",
    # collections and their helpers
    "java/util/Collection", "java/util/List", "java/util/ArrayList", "java/util/LinkedList",
    "java/util/AbstractList", "java/util/AbstractCollection", "java/util/AbstractMap",
    "java/util/AbstractSet", "java/util/AbstractQueue", "java/util/AbstractSequentialList",
    "java/util/Map", "java/util/Map$Entry", "java/util/HashMap", "java/util/LinkedHashMap",
    "java/util/TreeMap", "java/util/SortedMap", "java/util/NavigableMap", "java/util/Set",
    "java/util/HashSet", "java/util/LinkedHashSet", "java/util/TreeSet", "java/util/SortedSet",
    "java/util/NavigableSet", "java/util/Queue", "java/util/Deque", "java/util/ArrayDeque",
    "java/util/PriorityQueue", "java/util/Stack", "java/util/Vector", "java/util/Iterator",
    "java/util/ListIterator", "java/util/Comparator", "java/util/Collections", "java/util/Arrays",
    "java/util/Objects", "java/util/Optional", "java/util/OptionalInt", "java/util/OptionalLong",
    "java/util/OptionalDouble", "java/util/StringJoiner", "java/util/BitSet", "java/util/Random",
    "java/util/AbstractMap$SimpleEntry", "java/util/AbstractMap$SimpleImmutableEntry",
    "java/util/IntSummaryStatistics", "java/util/LongSummaryStatistics",
    "java/util/DoubleSummaryStatistics", "java/util/RandomAccess",
    # sequential streams and the functional interfaces (parallel ones are refused by name)
    "java/util/stream/Stream", "java/util/stream/IntStream", "java/util/stream/LongStream",
    "java/util/stream/DoubleStream", "java/util/stream/Collectors", "java/util/stream/Collector",
    "java/util/stream/BaseStream", "java/util/stream/Stream$Builder",
    "java/util/stream/IntStream$Builder",
    "java/util/function/Function", "java/util/function/BiFunction", "java/util/function/Predicate",
    "java/util/function/BiPredicate", "java/util/function/Consumer", "java/util/function/BiConsumer",
    "java/util/function/Supplier", "java/util/function/UnaryOperator",
    "java/util/function/BinaryOperator", "java/util/function/IntFunction",
    "java/util/function/IntPredicate", "java/util/function/IntUnaryOperator",
    "java/util/function/IntBinaryOperator", "java/util/function/ToIntFunction",
    "java/util/function/ToLongFunction", "java/util/function/ToDoubleFunction",
    "java/util/function/IntConsumer", "java/util/function/IntSupplier",
    "java/util/function/LongFunction", "java/util/function/LongUnaryOperator",
    "java/util/function/LongBinaryOperator", "java/util/function/DoubleFunction",
    "java/util/function/DoubleUnaryOperator", "java/util/function/DoubleBinaryOperator",
    "java/util/function/IntToLongFunction", "java/util/function/IntToDoubleFunction",
    "java/util/function/ToIntBiFunction", "java/util/function/ObjIntConsumer",
    "java/util/function/BooleanSupplier", "java/util/function/DoublePredicate",
    "java/util/function/LongPredicate",
    # numbers and patterns
    "java/math/BigInteger", "java/math/BigDecimal", "java/math/MathContext", "java/math/RoundingMode",
    "java/util/regex/Pattern", "java/util/regex/Matcher", "java/util/regex/MatchResult",
    "java/util/regex/PatternSyntaxException",
})
"""JDK classes every member of which only computes: nothing they offer changes the JVM for the
code that runs after (but :data:`REFUSED_MEMBERS`)."""

PURE_MEMBERS = frozenset({
    ("java/lang/System", "out"), ("java/lang/System", "err"), ("java/lang/System", "arraycopy"),
    ("java/lang/System", "nanoTime"), ("java/lang/System", "currentTimeMillis"),
    ("java/lang/System", "lineSeparator"), ("java/lang/System", "identityHashCode"),
    ("java/io/PrintStream", "println"), ("java/io/PrintStream", "print"),
    ("java/io/PrintStream", "printf"), ("java/io/PrintStream", "format"),
    ("java/io/PrintStream", "flush"), ("java/io/PrintStream", "write"),
    ("java/lang/Class", "desiredAssertionStatus"),  # every class with an assert statement
    ("java/lang/Class", "getName"), ("java/lang/Class", "getSimpleName"),
    # how javac compiles lambdas, method references, string concatenation and records
    ("java/lang/invoke/LambdaMetafactory", "metafactory"),
    ("java/lang/invoke/LambdaMetafactory", "altMetafactory"),
    ("java/lang/invoke/StringConcatFactory", "makeConcatWithConstants"),
    ("java/lang/runtime/ObjectMethods", "bootstrap"),
})
"""Members of other JDK classes that are safe: ``System.out`` is the runner's capture of the
current test, a ``PrintStream`` only writes there (``close`` and ``setOut`` are not here)."""

TYPE_ONLY = frozenset({
    "java/lang/System", "java/io/PrintStream", "java/lang/Class",
    "java/lang/invoke/MethodHandles$Lookup", "java/lang/invoke/MethodHandles",
    "java/lang/invoke/LambdaMetafactory", "java/lang/invoke/StringConcatFactory",
    "java/lang/runtime/ObjectMethods", "java/lang/invoke/MethodHandle", "java/lang/invoke/CallSite",
})
"""Classes a class file may name (an inner-class entry, a bootstrap's owner) without being
allowed any member beyond :data:`PURE_MEMBERS`."""

REFUSED_MEMBERS = frozenset({
    ("java/lang/Math", "random"), ("java/lang/StrictMath", "random"), ("java/util/Collections", "shuffle"),
})
"""Members of pure classes that use a generator the whole JVM shares: a sample could read and
advance it to choose what a later sample draws (a ``Random`` of the sample's own is fine)."""

REFUSED_NAMES = frozenset({"parallel", "parallelStream", "parallelSort", "parallelPrefix",
                           "parallelSetAll", "finalize"})
"""Member names refused on any class, its own included: a parallel stream runs on the common
pool's threads, which outlive the sample; a finalizer runs on the JVM's thread, later."""

MAX_CLASS_BYTES = 4 * 1024 * 1024

_UTF8, _INT, _FLOAT, _LONG, _DOUBLE, _CLASS, _STRING = 1, 3, 4, 5, 6, 7, 8
_FIELD, _METHOD, _IMETHOD, _NAT, _HANDLE, _MTYPE, _DYNAMIC, _INDY, _MODULE, _PACKAGE = (
    9, 10, 11, 12, 15, 16, 17, 18, 19, 20)
ACC_NATIVE = 0x0100


class ClassFormatError(ValueError):
    """Not a class file this reader understands (the sample then runs in a JVM of its own)."""


@dataclass
class ClassFile:
    """What the gate needs of one class file."""

    name: str
    supers: list[str]
    """The superclass and the interfaces."""
    classes: set[str] = field(default_factory=set)
    """Every class its constant pool names (array types by their element type)."""
    members: set[tuple[str, str]] = field(default_factory=set)
    """Every (class, member name) its field and method references name."""
    methods: list[tuple[str, int]] = field(default_factory=list)
    """Its own methods: (name, access flags)."""
    dynamic_constants: bool = False
    """Whether it has a ``CONSTANT_Dynamic`` (javac 17 writes none for plain code)."""


def read_class(data: bytes) -> ClassFile:
    """The names a class file refers to, from its constant pool, superclass, interfaces and
    method table.

    Raises:
        ClassFormatError: it is not a well-formed class file.
    """
    try:
        return _read(data)
    except (struct.error, IndexError, UnicodeDecodeError, KeyError) as e:
        raise ClassFormatError(f"not a readable class file: {e}") from e


def _read(data: bytes) -> ClassFile:
    if len(data) > MAX_CLASS_BYTES or data[:4] != b"\xca\xfe\xba\xbe":
        raise ClassFormatError("not a class file")
    count = struct.unpack_from(">H", data, 8)[0]
    pool: dict[int, tuple[int, object]] = {}
    at, i = 10, 1
    while i < count:
        tag = data[at]
        at += 1
        if tag == _UTF8:
            size = struct.unpack_from(">H", data, at)[0]
            pool[i] = (tag, data[at + 2:at + 2 + size].decode("utf-8", "surrogatepass"))
            at += 2 + size
        elif tag in (_INT, _FLOAT):
            at += 4
        elif tag in (_LONG, _DOUBLE):
            at += 8
            i += 1  # takes two slots
        elif tag in (_CLASS, _STRING, _MTYPE, _MODULE, _PACKAGE):
            pool[i] = (tag, struct.unpack_from(">H", data, at)[0])
            at += 2
        elif tag in (_FIELD, _METHOD, _IMETHOD, _NAT, _DYNAMIC, _INDY):
            pool[i] = (tag, struct.unpack_from(">HH", data, at))
            at += 4
        elif tag == _HANDLE:
            pool[i] = (tag, struct.unpack_from(">BH", data, at))
            at += 3
        else:
            raise ClassFormatError(f"unknown constant pool tag {tag}")
        i += 1

    def utf8(index: int) -> str:
        tag, value = pool[index]
        if tag != _UTF8 or not isinstance(value, str):
            raise ClassFormatError(f"constant {index} is not text")
        return value

    def class_name(index: int) -> str:
        tag, value = pool[index]
        if tag != _CLASS or not isinstance(value, int):
            raise ClassFormatError(f"constant {index} is not a class")
        return _element(utf8(value))

    this, parent = struct.unpack_from(">HH", data, at + 2)
    out = ClassFile(class_name(this), [class_name(parent)] if parent else [])
    at += 6
    interfaces = struct.unpack_from(">H", data, at)[0]
    out.supers += [class_name(struct.unpack_from(">H", data, at + 2 + 2 * k)[0]) for k in range(interfaces)]
    at += 2 + 2 * interfaces
    for tag, value in pool.values():
        if tag == _CLASS and isinstance(value, int):
            out.classes.add(_element(utf8(value)))
        elif tag in (_FIELD, _METHOD, _IMETHOD) and isinstance(value, tuple):
            owner, nat = value
            nat_tag, nat_value = pool[nat]
            if nat_tag != _NAT or not isinstance(nat_value, tuple):
                raise ClassFormatError("a member reference without a name")
            tag_owner, owner_index = pool[owner]
            if tag_owner != _CLASS or not isinstance(owner_index, int):
                raise ClassFormatError("a member reference without a class")
            out.members.add((_element(utf8(owner_index)), utf8(nat_value[0])))
        elif tag == _DYNAMIC:
            out.dynamic_constants = True
    fields_count = struct.unpack_from(">H", data, at)[0]
    at += 2
    for _ in range(fields_count):
        at = _skip_attributes(data, at + 6)
    methods_count = struct.unpack_from(">H", data, at)[0]
    at += 2
    for _ in range(methods_count):
        flags, name = struct.unpack_from(">HH", data, at)
        out.methods.append((utf8(name), flags))
        at = _skip_attributes(data, at + 6)
    return out


def _skip_attributes(data: bytes, at: int) -> int:
    """``at`` is an attributes count: the offset after them."""
    count = struct.unpack_from(">H", data, at)[0]
    at += 2
    for _ in range(count):
        size = struct.unpack_from(">I", data, at + 2)[0]
        at += 6 + size
        if at > len(data):
            raise ClassFormatError("an attribute runs past the end")
    return at


def _element(name: str) -> str:
    """``[[Ljava/lang/String;`` -> ``java/lang/String``; ``[I`` -> ``int``; others as they are."""
    stripped = name.lstrip("[")
    if stripped == name:
        return name
    if stripped.startswith("L") and stripped.endswith(";"):
        return stripped[1:-1]
    return "int"  # an array of a primitive type


def refusal(classes: Mapping[str, bytes]) -> str | None:
    """Why the sample whose class files are ``classes`` (file name -> bytes, its tests' class
    included) must run in a JVM of its own; None when it may share a warm one."""
    try:
        read = [read_class(data) for data in classes.values()]
    except ClassFormatError as e:
        return str(e)
    own = {c.name for c in read}
    for c in read:
        if c.dynamic_constants:
            return f"{c.name} has a dynamic constant"
        for name, flags in c.methods:
            if flags & ACC_NATIVE:
                return f"{c.name}.{name} is native"
            if name in REFUSED_NAMES:
                return f"{c.name} declares {name}"
        for parent in c.supers:
            if parent not in own and parent not in PURE_CLASSES:
                return f"{c.name} extends or implements {parent}"
        for name in c.classes:
            if name not in own and name not in PURE_CLASSES and name not in TYPE_ONLY and name != "int":
                return f"{c.name} uses {name}"
        for owner, member in c.members:
            if member in REFUSED_NAMES or (owner, member) in REFUSED_MEMBERS:
                return f"{c.name} calls {owner.replace('/', '.')}.{member}"
            if owner in own or owner in PURE_CLASSES or owner == "int" or (owner, member) in PURE_MEMBERS:
                continue  # ("int": an array of a primitive type, whose members are clone and length)
            return f"{c.name} uses {owner.replace('/', '.')}.{member}"
    return None
