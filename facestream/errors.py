"""The errors facestream raises on purpose, each with the exit code the CLI returns for it.

Third-party failures (librdkafka, ONNX Runtime, OpenCV, pip, Java) are translated into these at
the edge, so a user sees one clear sentence instead of a traceback::

    FacestreamError
     +-- ConfigError      bad flag, env var or config file          (exit 2)
     +-- BrokerError      Kafka unreachable or failed to start      (exit 3)
     +-- ModelError       model missing, unknown or unusable        (exit 4)
     +-- AssetError       a download or checksum failed             (exit 5)
     +-- SourceError      a producer source cannot be opened/read   (exit 6)
"""


class FacestreamError(Exception):
    exit_code = 1


class ConfigError(FacestreamError):
    exit_code = 2


class BrokerError(FacestreamError):
    exit_code = 3


class ModelError(FacestreamError):
    exit_code = 4


class AssetError(FacestreamError):
    exit_code = 5


class SourceError(FacestreamError):
    exit_code = 6
