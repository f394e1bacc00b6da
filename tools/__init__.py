"""The commands that combine the services: the ``facestream`` CLI hub, the live demo, the events viewer,
the sample-photo command and model export. The top floor: it may import every package below it, and
nothing below imports it (docs/architecture.md)."""
