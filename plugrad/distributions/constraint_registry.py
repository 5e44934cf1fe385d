"""``biject_to`` / ``transform_to``: from a constraint to a transform onto it (from reals).

Optimisers work in unconstrained space; ``transform_to(constraints.positive)(u)`` is a
positive parameter. Covered: real, positive/nonnegative, greater_than(_eq), less_than,
unit_interval, interval/half_open_interval, simplex (stick-breaking for ``biject_to``,
softmax for ``transform_to``), independent, and for ``transform_to`` lower_cholesky and
positive_(semi)definite; others raise ``NotImplementedError``.
"""
from __future__ import annotations

from numbers import Number

from plugrad.distributions import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Factories keyed on the constraint's type, called with the constraint object."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                              constraints.Constraint):
            raise TypeError("Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      "constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(constraint):
    return transforms.identity_transform


def _greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.lower_bound, 1)])


def _less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(constraint.upper_bound, -1)])


def _interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc, scale = constraint.lower_bound, constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(loc, scale)])


def _independent(registry):
    def factory(constraint):
        return transforms.IndependentTransform(registry(constraint.base_constraint),
                                               constraint.reinterpreted_batch_ndims)
    return factory


biject_to.register(constraints.simplex, lambda c: transforms.StickBreakingTransform())
transform_to.register(constraints.simplex, lambda c: transforms.SoftmaxTransform())
transform_to.register(constraints.lower_cholesky,
                      lambda c: transforms.LowerCholeskyTransform())
transform_to.register(constraints.positive_definite,
                      lambda c: transforms.PositiveDefiniteTransform())
transform_to.register(constraints.positive_semidefinite,
                      lambda c: transforms.PositiveDefiniteTransform())

for _registry in (biject_to, transform_to):
    _registry.register(constraints.independent, _independent(_registry))
    _registry.register(constraints.corr_cholesky, lambda c: transforms.CorrCholeskyTransform())
    _registry.register(constraints.real, _real)
    _registry.register(constraints.positive, _greater_than)
    _registry.register(constraints.greater_than_eq, _greater_than)
    _registry.register(constraints.less_than, _less_than)
    _registry.register(constraints.interval, _interval)
    _registry.register(constraints.half_open_interval, _interval)
