"""A face track's name, decided by a vote over its good frames rather than face by face.

One frame's match is noisy: a face turned away or far off may come closest to someone it is not. So a
rule that names people (stranger, person_seen) on a camera whose faces are followed lets each face of a
track vote: for the person it matches (at the rule's threshold) or for nobody known (``UNKNOWN``),
weighted by its quality (``facestream.face_quality``; a face under the gate does not vote) and by how
sure its match is (a similarity near the threshold is weak evidence either way: full weight from
``MARGIN`` off it). The track is named once a name has ``DECIDE`` of weight, and the name switches
only when another leads it by ``SWITCH``: the weight of two or three more good faces, so one odd
frame never renames a person. Votes cast against an older gallery are dropped when it changes (a
stranger enrolled while in view is named by their next good face, not outvoted by their past).
"""

from typing import Protocol

from facestream.face_quality import GOOD, quality

UNKNOWN = ""  # the vote for "nobody in the gallery"
DECIDE = 0.5  # the weight a name needs before the track has one: one good, sure face
SWITCH = 1.0  # how far another name must lead the current one, in summed weight, to replace it
MARGIN = 0.1  # a match this far from the threshold, or farther, is sure


class Naming(Protocol):
    """What a rule's settings say of naming: its threshold, and how long a face may go unseen."""

    @property
    def match_threshold(self) -> float: ...

    @property
    def end_after_s(self) -> float: ...


def track_name(
    state: dict,
    track: str,
    face,
    person: str | None,
    similarity: float,
    settings: Naming,
    now: float,
    gallery: int,
    lent: bool = False,
) -> str | None:
    """``name_of`` for one face of ``track`` whose best match is ``person`` at ``similarity``: a vote
    for them at or above the rule's threshold, else for UNKNOWN; tallies kept ``end_after_s``. A face
    whose embedding was ``lent`` by its detector track (``schemas.tracks``) does not vote: the face
    that embedding was made from voted already, and a poor one must not gain the weight of every
    better face that carries it."""
    who = person if person and similarity >= settings.match_threshold else UNKNOWN
    vote = 0.0 if lent else weight(face, similarity, settings.match_threshold)
    return name_of(state, track, who, vote, now, settings.end_after_s, gallery)


def weight(face, similarity: float, threshold: float) -> float:
    """A face's vote: its quality (0 under the gate) times how sure its match is."""
    found = quality(face.box, face.score, face.landmarks, face.sharpness)
    sure = min(abs(similarity - threshold) / MARGIN, 1.0)
    return found * sure if found >= GOOD else 0.0


def name_of(
    state: dict, track: str, who: str, vote: float, now: float, forget_after_s: float, gallery: int = 0
) -> str | None:
    """Count one face of ``track`` for ``who`` (a person id, or UNKNOWN) with ``vote``, judged against
    the gallery as of its change number ``gallery`` (``Gallery.changes``); return the name decided so
    far (None while no name has ``DECIDE`` of weight). ``state`` (a rule's, changed in place) keeps a
    tally per track, forgotten ``forget_after_s`` after the track's last face."""
    tracks: dict[str, dict] = state.setdefault("tracks", {})
    for name in [name for name, tally in tracks.items() if now - tally["last"] > forget_after_s]:
        del tracks[name]
    tally = tracks.setdefault(track, {"votes": {}, "who": None, "last": now})
    tally["last"] = now
    if tally.get("gallery", gallery) != gallery:  # judged against a gallery that has changed since
        tally["votes"], tally["who"] = {}, None
    tally["gallery"] = gallery
    if vote > 0:
        votes: dict[str, float] = tally["votes"]
        votes[who] = round(votes.get(who, 0.0) + vote, 4)
        leader = max(votes, key=votes.__getitem__)
        held = tally["who"]
        if (held is None and votes[leader] >= DECIDE) or (held is not None and votes[leader] >= votes[held] + SWITCH):
            tally["who"] = leader
    return tally["who"]
