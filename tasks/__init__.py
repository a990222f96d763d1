"""Built-in task heads; importing this package registers them."""
