"""The process's Kafka settings (librdkafka's names: ``facestream.kafka_settings``) as faust's broker
credentials, so the alerting workers reach a TLS or SASL cluster with the same settings as every
other service. faust talks to Kafka through aiokafka, which takes only the security settings below:
any other setting is an error here rather than something the workers silently do without.
"""

import ssl

import faust

from facestream.errors import ConfigError

SUPPORTED = {
    "security.protocol",
    "sasl.mechanism",
    "sasl.mechanisms",  # librdkafka's older spelling
    "sasl.username",
    "sasl.password",
    "ssl.ca.location",
    "ssl.certificate.location",
    "ssl.key.location",
    "ssl.key.password",
    "ssl.endpoint.identification.algorithm",
}
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")


def faust_options(settings: dict[str, str]) -> dict:
    """``faust.App`` keyword arguments (``broker_credentials``) for ``settings``; {} for plaintext."""
    others = sorted(set(settings) - SUPPORTED)
    if others:
        raise ConfigError(
            f"the alerting service (faust on aiokafka) cannot use Kafka setting(s) {', '.join(others)}; "
            f"it takes {', '.join(sorted(SUPPORTED))}"
        )
    protocol = settings.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise ConfigError(f"security.protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    context = _ssl_context(settings) if protocol.endswith("SSL") else None
    if protocol.startswith("SASL"):
        mechanism = settings.get("sasl.mechanism") or settings.get("sasl.mechanisms") or "PLAIN"
        try:
            credentials = faust.SASLCredentials(
                username=settings.get("sasl.username"),
                password=settings.get("sasl.password"),
                ssl_context=context,
                mechanism=mechanism.upper(),
            )
        except ValueError:
            raise ConfigError(f"sasl.mechanism {mechanism!r} is not one faust supports") from None
        return {"broker_credentials": credentials}
    return {"broker_credentials": faust.SSLCredentials(context)} if context is not None else {}


def _ssl_context(settings: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=settings.get("ssl.ca.location"))
    if settings.get("ssl.certificate.location"):
        context.load_cert_chain(
            settings["ssl.certificate.location"], settings.get("ssl.key.location"), settings.get("ssl.key.password")
        )
    if settings.get("ssl.endpoint.identification.algorithm", "https").lower() == "none":
        context.check_hostname = False
    return context
