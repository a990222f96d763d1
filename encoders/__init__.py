"""Built-in encoders; importing this package registers them."""
