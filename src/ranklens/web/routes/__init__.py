"""The dashboard's pages, one module each (its path and the answers of its JSON endpoints), and ``static``
(the HTML shell every page shares, the API docs, the packaged files): :func:`ranklens.web.create_app` assembles
them."""
