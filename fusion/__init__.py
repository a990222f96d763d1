"""Built-in fusion layers; importing this package registers them."""
