"""A JSON codec for the controller's model: jobs, requests, partitions and node conditions.

Encoding gives plain JSON-able values: enums by value, tuples and frozensets as lists (a
frozenset sorted, so that the same object always encodes to the same text), floats and None
as they are. Decoding is for data that may come from the network or from a file another
version wrote, so it checks everything and raises only :class:`CodecError`, whose message
names the field (``$.request.min_nodes``): wrong types, unknown enum values, missing
required fields, unknown fields, booleans where a number is expected, NaN and infinities
where a time is expected, and integers that do not fit in 64 bits are all refused.

Decoding is done by cattrs (dicts to attrs classes) with strict hooks for the scalar
types, its converter built on the first decode; encoding is one small recursive function
over the attrs fields (:func:`_plain`), so that a command that only sends a request
(sbatch) never imports cattrs. :data:`FORMAT_VERSION` changes whenever an encoded form
changes in a way an older decoder would refuse or misread.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from plurm.conf.model import PartitionSpec
from plurm.errors import PlurmError
from plurm.model.job import Job, JobRequest
from plurm.model.node import NodeCondition

if TYPE_CHECKING:
    import cattrs

    from plurm.model.acct import AcctQuery, JobRecord, StepRecord

__all__ = [
    "FORMAT_VERSION",
    "CodecError",
    "condition_from_dict",
    "condition_to_dict",
    "job_from_dict",
    "job_to_dict",
    "partition_from_dict",
    "partition_to_dict",
    "query_from_dict",
    "query_to_dict",
    "record_from_dict",
    "record_to_dict",
    "request_from_dict",
    "request_to_dict",
    "step_from_dict",
    "step_to_dict",
]

#: The version of the encoded forms below (stored beside them by the state store).
#: 2: job arrays, dependencies and holds; 3: typed GRES requests; 4: a job's preemption counts;
#: 5: a victim's preemptor (``preempted_by``). 6: a requeued job's delay
#: (``requeue_delay``) while its teardown runs.
FORMAT_VERSION = 6

_INT_MIN = -(1 << 63)
_INT_MAX = (1 << 63) - 1

T = TypeVar("T")


class CodecError(PlurmError, ValueError):
    """Data that does not decode to a valid object; the message names the field."""


def _int(value: object, _: type) -> int:
    # bool is a subclass of int: refused, as is anything else that is not exactly an int.
    if type(value) is not int:
        raise TypeError(f"expected an integer, not {_kind(value)}")
    if not _INT_MIN <= value <= _INT_MAX:
        raise ValueError("integer out of the 64-bit range")
    return value


def _float(value: object, _: type) -> float:
    if type(value) is int:
        if not _INT_MIN <= value <= _INT_MAX:
            raise ValueError("number out of the 64-bit range")
        return float(value)
    if type(value) is not float:
        raise TypeError(f"expected a number, not {_kind(value)}")
    if not math.isfinite(value):
        raise ValueError("expected a finite number, not NaN or an infinity")
    return value


def _str(value: object, _: type) -> str:
    if type(value) is not str:
        raise TypeError(f"expected a string, not {_kind(value)}")
    return value


def _bool(value: object, _: type) -> bool:
    if type(value) is not bool:
        raise TypeError(f"expected true or false, not {_kind(value)}")
    return value


def _step_id(value: object, _: type) -> str | int:
    """A job step's id: a number, or a name (batch, extern)."""
    if type(value) is str:
        return value
    return _int(value, int)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _enum(cls: type[enum.Enum]) -> Callable[[object, type], enum.Enum]:
    values = {member.value: member for member in cls}

    def structure(value: object, _: type) -> enum.Enum:
        if type(value) is not str or value not in values:
            raise ValueError(f"unknown {cls.__name__} {value!r}")
        return values[value]

    return structure


def _sequence(value: object) -> list[Any]:
    if type(value) is not list:
        raise TypeError(f"expected a list, not {_kind(value)}")
    return value


def _is_enum(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, enum.Enum)


def _origin(cls: Any) -> Any:
    return getattr(cls, "__origin__", None)


def _make_converter() -> cattrs.Converter:
    import cattrs
    from cattrs.gen import make_dict_structure_fn

    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(int, _int)
    converter.register_structure_hook(float, _float)
    converter.register_structure_hook(str, _str)
    converter.register_structure_hook(bool, _bool)
    converter.register_structure_hook(str | int, _step_id)
    converter.register_structure_hook_factory(_is_enum, _enum)
    converter.register_unstructure_hook_factory(_is_enum, lambda cls: _enum_value)

    def attrs_hook(cls: type[Any]) -> Callable[[object, type], Any]:
        inner = make_dict_structure_fn(cls, converter)

        def structure(value: object, target: type) -> Any:
            if type(value) is not dict:
                raise TypeError(f"expected an object, not {_kind(value)}")
            return inner(value, target)

        return structure

    converter.register_structure_hook_factory(attrs.has, attrs_hook)

    def element(cls: Any, index: int, item: object, kind: Any) -> Any:
        try:
            return converter.structure(item, kind)
        except cattrs.BaseValidationError as error:
            raise ValueError(_first_message(error, f"item {index}")) from None
        except (TypeError, ValueError) as error:
            raise ValueError(f"item {index}: {error}") from None

    def tuple_hook(cls: Any) -> Callable[[object, type], Any]:
        args = cls.__args__
        if len(args) == 2 and args[1] is Ellipsis:

            def homogeneous(value: object, _: type) -> Any:
                items = _sequence(value)
                return tuple(element(cls, i, item, args[0]) for i, item in enumerate(items))

            return homogeneous

        def fixed(value: object, _: type) -> Any:
            items = _sequence(value)
            if len(items) != len(args):
                raise ValueError(f"expected a list of {len(args)} items, not {len(items)}")
            return tuple(element(cls, i, item, args[i]) for i, item in enumerate(items))

        return fixed

    def frozenset_hook(cls: Any) -> Callable[[object, type], Any]:
        (kind,) = cls.__args__

        def structure(value: object, _: type) -> Any:
            items = _sequence(value)
            return frozenset(element(cls, i, item, kind) for i, item in enumerate(items))

        return structure

    def mapping_hook(cls: Any) -> Callable[[object, type], Any]:
        _, value_type = cls.__args__  # keys are strings in JSON (and in the model)

        def structure(value: object, _: type) -> Any:
            if type(value) is not dict:
                raise TypeError(f"expected an object, not {_kind(value)}")
            return {
                _str(key, str): element(cls, index, item, value_type)
                for index, (key, item) in enumerate(value.items())
            }

        return structure

    converter.register_structure_hook_factory(lambda cls: _origin(cls) is tuple, tuple_hook)
    converter.register_structure_hook_factory(lambda cls: _origin(cls) is frozenset, frozenset_hook)
    converter.register_structure_hook_factory(
        lambda cls: _origin(cls) in (Mapping, dict), mapping_hook
    )
    converter.register_unstructure_hook_factory(
        lambda cls: _origin(cls) is tuple,
        lambda cls: lambda value: [converter.unstructure(item) for item in value],
    )
    converter.register_unstructure_hook_factory(
        lambda cls: _origin(cls) is frozenset,
        lambda cls: (
            lambda value: sorted(
                ([*item] if isinstance(item, tuple) else item for item in value), key=repr
            )
        ),
    )
    converter.register_unstructure_hook_factory(
        lambda cls: _origin(cls) in (Mapping, dict), lambda cls: dict
    )
    return converter


def _enum_value(member: enum.Enum) -> Any:
    return member.value


def _describe(error: BaseException, _: Any) -> str:
    """One problem in words, for cattrs.transform_error."""
    import cattrs

    if isinstance(error, cattrs.ForbiddenExtraKeysError):
        return f"unknown fields ({', '.join(sorted(error.extra_fields))})"
    if isinstance(error, KeyError):
        return "required field missing"
    return str(error) or type(error).__name__


def _first_message(error: cattrs.BaseValidationError, path: str) -> str:
    import cattrs

    messages = cattrs.transform_error(error, path=path, format_exception=_describe)
    return messages[0] if messages else str(error)


_CONVERTER: cattrs.Converter | None = None


def _converter() -> cattrs.Converter:
    global _CONVERTER
    if _CONVERTER is None:
        _CONVERTER = _make_converter()
    return _CONVERTER


#: Each attrs class's field names, in order.
_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(value: Any) -> Any:
    """``value`` as JSON-able values: an attrs object as a dict of its fields, an enum as its
    value, a tuple as a list (items encoded), a frozenset as a list sorted by repr (a tuple
    in it as a list), a mapping as a dict; anything else as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if kind is tuple or kind is list:
        return [_plain(item) for item in value]
    if kind is frozenset or kind is set:
        return sorted(([*item] if type(item) is tuple else item for item in value), key=repr)
    if kind is dict:
        return dict(value)
    if isinstance(value, enum.Enum):
        return value.value
    names = _FIELDS.get(kind)
    if names is None:
        if not attrs.has(kind):
            if isinstance(value, Mapping):
                return dict(value)
            return value
        names = _FIELDS[kind] = tuple(field.name for field in attrs.fields(kind))
    return {name: _plain(getattr(value, name)) for name in names}


def _encode(value: object) -> dict[str, Any]:
    encoded = _plain(value)
    assert isinstance(encoded, dict)
    return encoded


def _decode(data: object, cls: type[T], what: str) -> T:
    import cattrs

    try:
        return _converter().structure(data, cls)
    except cattrs.BaseValidationError as error:
        messages = cattrs.transform_error(error, path=what, format_exception=_describe)
        raise CodecError(f"invalid {what}: " + "; ".join(messages)) from None
    except (TypeError, ValueError, KeyError, AttributeError) as error:
        raise CodecError(f"invalid {what}: {error} @ {what}") from None
    except RecursionError:
        raise CodecError(f"invalid {what}: nested too deeply") from None


def job_to_dict(job: Job) -> dict[str, Any]:
    """A job as JSON-able values (its request nested under ``request``)."""
    return _encode(job)


def job_from_dict(data: object) -> Job:
    """The job ``data`` encodes; :class:`CodecError` if it is not a valid job."""
    return _decode(data, Job, "job")


def request_to_dict(request: JobRequest) -> dict[str, Any]:
    return _encode(request)


def request_from_dict(data: object) -> JobRequest:
    return _decode(data, JobRequest, "request")


def partition_to_dict(partition: PartitionSpec) -> dict[str, Any]:
    return _encode(partition)


def partition_from_dict(data: object) -> PartitionSpec:
    return _decode(data, PartitionSpec, "partition")


def condition_to_dict(condition: NodeCondition) -> dict[str, Any]:
    return _encode(condition)


def condition_from_dict(data: object) -> NodeCondition:
    return _decode(data, NodeCondition, "condition")


def record_to_dict(record: JobRecord) -> dict[str, Any]:
    """An accounting record (its steps nested under ``steps``)."""
    return _encode(record)


def record_from_dict(data: object) -> JobRecord:
    from plurm.model.acct import JobRecord

    return _decode(data, JobRecord, "record")


def step_to_dict(step: StepRecord) -> dict[str, Any]:
    return _encode(step)


def step_from_dict(data: object) -> StepRecord:
    from plurm.model.acct import StepRecord

    return _decode(data, StepRecord, "step")


def query_to_dict(query: AcctQuery) -> dict[str, Any]:
    """A sacct selection (plurmctld answers it from the accounting store)."""
    return _encode(query)


def query_from_dict(data: object) -> AcctQuery:
    from plurm.model.acct import AcctQuery

    return _decode(data, AcctQuery, "query")
