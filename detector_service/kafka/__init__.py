"""The detector's Kafka side: the group member, batches by poll size, offsets committed after
acknowledgements (or in transactions), the limits and skip rules a frame meets, the publisher."""
