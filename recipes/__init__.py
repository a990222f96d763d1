"""Shipped YAML recipes (package data)."""
