"""The command line: the ``ranklens`` group and one module per command (the top layer)."""
