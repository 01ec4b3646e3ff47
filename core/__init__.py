"""The kernel the apps share, below all of them (it imports only the engine): the REST plumbing (``api``, ``errors``,
``fields``, ``parsers``), the names rule for forms (``names``), the facts the lower apps ask of the clusters through
one interface (``facts``), who owns the trees (``tree_owner``) and the advisory-lock keys of every app in one table
(``locks``)."""
