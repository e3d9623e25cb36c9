"""Covariate roles and the leakage guard.

A covariate is declared once, by when its values are known:

* future-known: known for the forecast horizon in advance (calendar, promotions,
  weather forecasts). These reach the decoder only.
* past-only: observed up to the forecast origin. These reach the encoder only.
* static: constant per series.

:func:`encoder_columns` is the single gate through which columns enter the
encoder input; it refuses anything declared future-known.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class LeakageError(ValueError):
    """Information dated after a forecast origin would reach the model or a scaler."""


def _as_names(value: str | Iterable[str] | None, argument: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    names = tuple(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"`{argument}` must hold column names (str); found {name!r}.")
    if len(set(names)) != len(names):
        raise ValueError(f"`{argument}` lists a column twice: {reprlib.repr(names)}.")
    return names


@dataclass(frozen=True)
class CovariateRoles:
    """Which column plays which role.

    Attributes:
        future: future-known covariates (decoder only).
        past: past-only covariates (encoder only).
        static: per-series constants.
    """

    future: tuple[str, ...] = ()
    past: tuple[str, ...] = ()
    static: tuple[str, ...] = ()

    @classmethod
    def from_params(cls, params: dict) -> CovariateRoles:
        """The roles an estimator's parameters declare (``future_covariates``, ...), checked as ``from_arguments`` does."""
        reserved = (params["id_col"], params["time_col"], params["target_col"])
        future, past, static = (params[f"{role}_covariates"] for role in ("future", "past", "static"))
        return cls.from_arguments(future, past, static, reserved)

    @classmethod
    def from_arguments(
        cls,
        future: str | Iterable[str] | None,
        past: str | Iterable[str] | None,
        static: str | Iterable[str] | None,
        reserved: Sequence[str] = (),
    ) -> CovariateRoles:
        """Build roles from user arguments, refusing a column declared in two roles.

        Raises:
            LeakageError: a column is declared both future-known and past-only (or static),
                or a covariate reuses a reserved column (id, time, target).
        """
        roles = cls(
            _as_names(future, "future_covariates"),
            _as_names(past, "past_covariates"),
            _as_names(static, "static_covariates"),
        )
        seen: dict[str, str] = {}
        for role, names in (("future", roles.future), ("past", roles.past), ("static", roles.static)):
            for name in names:
                if name in reserved:
                    raise LeakageError(f"Column `{name}` is the id, time or target column and cannot also be a {role} covariate.")
                if name in seen:
                    raise LeakageError(
                        f"Column `{name}` is declared as both a {seen[name]} and a {role} covariate; "
                        "each column must have exactly one role."
                    )
                seen[name] = role
        return roles

    @property
    def all(self) -> tuple[str, ...]:
        return self.future + self.past + self.static


def encoder_columns(roles: CovariateRoles, requested: Sequence[str]) -> tuple[str, ...]:
    """Return the covariate columns allowed into the encoder, in order.

    This is the only function that decides what enters the encoder input besides
    the target. Future-known columns are refused: their values at history times
    are harmless, but letting the encoder read a column whose horizon values the
    caller also supplies is how a forecast quietly starts to depend on the future.

    Raises:
        LeakageError: a requested column is declared future-known or is unknown.
    """
    for name in requested:
        if name in roles.future:
            raise LeakageError(f"Column `{name}` is declared future-known; it may enter the decoder only, never the encoder.")
        if name not in roles.past:
            raise LeakageError(f"Column `{name}` is not declared as a past covariate and cannot enter the encoder.")
    return tuple(requested)


def refuse_unknown_ahead(frame, argument: str, target: str, roles: CovariateRoles) -> None:
    """Refuse a frame of values known in advance (``future_df``, ``future_covariates_df``) that holds the target or a
    past-only covariate (LeakageError naming them)."""
    leaked = [name for name in (target, *roles.past) if name in frame.columns]
    if leaked:
        raise LeakageError(
            f"`{argument}` carries {', '.join(f'`{c}`' for c in leaked)}, which is not known in advance; "
            "pass only the id, time and future-known covariate columns."
        )
