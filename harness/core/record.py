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
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
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
    """A record written back with exactly the fields it was given, in declared order: one read from a line keeps
    that line's keys (an older harness wrote fewer), one built by the code has those it was built with. Its
    optional fields default to None and are left out of the line unless given."""

    @model_serializer(mode="wrap")
    def _given_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        given = self.model_fields_set
        return {name: value for name, value in handler(self).items() if name in given}


def validation_problem(error: ValidationError, skip: int = 0) -> str:
    """The first thing wrong, as one line naming its field: `field 'response.text': Input should be a valid
    string`. `skip`: leading parts of the place that name no field (a union's tag)."""
    first = error.errors()[0]
    place = ".".join(str(part) for part in first["loc"][skip:])
    message = "missing" if first["type"] == "missing" else first["msg"]
    return f"field '{place}': {message}" if place else message
