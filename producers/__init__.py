"""Edge producers: read cameras, video files or image folders and publish JPEG frames to Kafka.

``sources`` opens what a user names, ``encoder`` makes the JPEG, ``streamer`` paces each camera
to its frame rate and publishes ``schemas.Frame`` messages keyed by camera id.
"""
