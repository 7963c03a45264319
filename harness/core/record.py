"""The base of every record a run writes and reads back (trajectory events, the model's reply, result rows'
companions): a frozen pydantic model that takes exactly its fields, each of exactly its type.

Strict: a line whose `turn` is `"3"` or whose `text` is a number is not read as if it were right, it is a
wrong line. Numbers a record keeps as written (`Number`): a duration logged as `0` stays `0`, not `0.0`, so a
record read and written again is the same bytes.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainValidator,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError


def _number(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("number", "Input should be a valid number")
    return value


Number = Annotated[float, PlainValidator(_number)]
"""A float field that keeps an int as written (JSON's `0` and `0.0` are different bytes)."""


class Record(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class AsGiven(Record):
    """A record written back exactly as it was given: the fields it was given, in the order given. One read from a
    line is that line again (an older harness wrote fewer fields, or in another order); one built by the code has
    the fields it was built with. Its optional fields default to None and are left out unless given."""

    _given_order: tuple[str, ...] = PrivateAttr(default=())

    @model_validator(mode="wrap")
    @classmethod
    def _keep_order(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        record = handler(data)
        if isinstance(data, dict) and isinstance(record, AsGiven):
            record._given_order = tuple(data)
        return record

    def __eq__(self, other: object) -> bool:
        """The same fields of the same values, in whatever order they were given."""
        return type(other) is type(self) and self.model_dump() == other.model_dump()

    __hash__ = Record.__hash__

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        fields = handler(self)
        order = self._given_order or tuple(fields)
        return {name: fields[name] for name in order if name in fields and name in self.model_fields_set}


def validation_problem(error: ValidationError, skip: int = 0) -> str:
    """The first thing wrong, as one line naming its field: `field 'response.text': Input should be a valid
    string`. `skip`: leading parts of the place that name no field (a union's tag)."""
    first = error.errors()[0]
    place = ".".join(str(part) for part in first["loc"][skip:])
    message = "missing" if first["type"] == "missing" else first["msg"]
    return f"field '{place}': {message}" if place else message
