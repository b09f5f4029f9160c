"""The shape every topic file uses (imported by topics_attributes.py and topics_content.py)."""


def topic(qid, family, dimension, query, changed, reversed_, changed_docs, reversed_docs,
          distractors, checks=()):
    """One query of the set.

    qid: "a01".."a99" for attribute topics, "c01".."c99" for content topics.
    family: "attribute" (a property of the document: source/genre, format, length, audience,
            register, point of view...) or "content" (what the document says: a time span, a
            place, a study type, a subtopic that is excluded, a condition...).
    dimension: a short label, e.g. "source: forum vs news", "time: after 2015 vs before".
    changed_docs / reversed_docs / distractors: lists of (title, text).
    checks: optional functions topic -> list of problem strings (programmatic label checks).
    """
    return {
        "qid": qid, "family": family, "dimension": dimension, "query": query,
        "changed": changed, "reversed": reversed_, "changed_docs": list(changed_docs),
        "reversed_docs": list(reversed_docs), "distractors": list(distractors),
        "checks": list(checks),
    }
