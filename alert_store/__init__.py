"""The alert store: every alert's whole life, its snapshot and its review, kept in a database
(``facestream alert-store``)."""
