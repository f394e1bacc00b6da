"""The notifier: alerts sent to people (push, chat, e-mail, webhooks, MQTT) through Apprise, under
rules per target that keep floods out (``facestream notify``)."""
