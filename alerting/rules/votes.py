"""A face track's name, decided by a vote over its good frames rather than face by face.

One frame's match is noisy: a face turned away or far off may come closest to someone it is not. So a
rule that names people (stranger, person_seen) on a camera whose faces are followed lets each face of a
track vote: for the person it matches (at the rule's threshold) or for nobody known (``UNKNOWN``),
weighted by its quality (``facestream.face_quality``; a face under the gate does not vote). The track
is named by the first good face, and the name switches only when another name leads it by ``SWITCH``:
the weight of two or three more good faces, so one odd frame never renames a person.
"""

from facestream.face_quality import GOOD, quality

UNKNOWN = ""  # the vote for "nobody in the gallery"
SWITCH = 1.0  # how far another name must lead the current one, in summed quality, to replace it


def weight(face) -> float:
    """A face's vote: its quality, or 0 under the gate."""
    found = quality(face.box, face.score, face.landmarks)
    return found if found >= GOOD else 0.0


def name_of(state: dict, track: str, who: str, vote: float, now: float, forget_after_s: float) -> str | None:
    """Count one face of ``track`` for ``who`` (a person id, or UNKNOWN) with ``vote``; return the name
    decided so far (None while no good face has voted). ``state`` (a rule's, changed in place) keeps a
    tally per track, forgotten ``forget_after_s`` after the track's last face."""
    tracks: dict[str, dict] = state.setdefault("tracks", {})
    for name in [name for name, tally in tracks.items() if now - tally["last"] > forget_after_s]:
        del tracks[name]
    tally = tracks.setdefault(track, {"votes": {}, "who": None, "last": now})
    tally["last"] = now
    if vote > 0:
        votes: dict[str, float] = tally["votes"]
        votes[who] = round(votes.get(who, 0.0) + vote, 4)
        leader = max(votes, key=votes.__getitem__)
        held = tally["who"]
        if held is None or votes[leader] >= votes.get(held, 0.0) + SWITCH:
            tally["who"] = leader
    return tally["who"]
