"""Differentiable ops, grouped by kind; each op checks, dispatches and records the graph."""
