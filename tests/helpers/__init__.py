"""What many tests share: the real servers they start (RTSP cameras, receivers, PostgreSQL), the
services they run in processes of their own, and the records they make and read. Imported as
``helpers.<name>`` (``tests`` is on pytest's ``pythonpath``)."""
