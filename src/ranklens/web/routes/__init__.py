"""The dashboard's pages, one module each (the answers of their JSON endpoints): the app assembles them."""
