"""The prompts of Appendix A.2 in Spanish and German: parallel translations, one per English text.

Each language maps the name of an English text of ``prompts`` (``DESCRIPTION_INTRO``,
``VOTING_JSON_FORMAT``, ...) to its translation, with the same ``{slots}``.  What the game
reads back stays as in English: the ballot's JSON keys (``suspected_impostor_id``...) and
its ``true``/``null`` values, and player numbers; players are named in the language
("Jugador 2", "Spieler 2"), and the ballot parser reads those names too
(``parsing.parse_player_id``).  Translated by this project (docs/rules.md, "Languages");
German uses "Betrüger" for the impostor, Spanish "impostor".

Plain Python: no Inspect, MLflow or pandas import.
"""

from __future__ import annotations

import re
from typing import Callable

__all__ = ["TEXTS", "NUMBER_WORDS", "reason"]

_ES_RULES = (
    "REGLAS DE LA FASE DE DESCRIPCIÓN:\n"
    "- Describe tu palabra en 1-2 frases\n"
    "- NO menciones tu palabra directamente\n"
    "- NO analices todavía las descripciones de los demás jugadores"
)
_DE_RULES = (
    "REGELN DER BESCHREIBUNGSPHASE:\n"
    "- Beschreibe dein Wort in 1-2 Sätzen\n"
    "- Nenne dein Wort NICHT direkt\n"
    "- Analysiere die Beschreibungen der anderen Spieler noch NICHT"
)

_ES_TEAM_AWARE = (
    "INFORMACIÓN DEL EQUIPO:\n"
    "- Tú y el Jugador {teammate_position} son compañeros de equipo (emparejados para esta partida)\n"
    "- Los equipos se basan en el tipo de modelo, NO en los roles (mayoría/impostor)\n"
    "- Tu compañero puede tener la misma palabra que tú O puede ser el impostor\n"
    "- Solo hay 1 impostor en total entre los 4 jugadores"
)
_DE_TEAM_AWARE = (
    "TEAMINFORMATION:\n"
    "- Du und Spieler {teammate_position} seid Teamkollegen (für dieses Spiel einander zugeteilt)\n"
    "- Die Teams richten sich nach dem Modelltyp, NICHT nach den Rollen (Mehrheit/Betrüger)\n"
    "- Dein Teamkollege hat vielleicht dasselbe Wort wie du ODER ist vielleicht der Betrüger\n"
    "- Es gibt insgesamt nur 1 Betrüger unter allen 4 Spielern"
)

_JSON = (
    "{{\n"
    '  "suspected_impostor_id": "player_id",\n'
    '  "confidence": 0.73,\n'
    '  "reasoning": "{explanation}",\n'
    '  "self_declaration": false,\n'
    '  "word_guess": null\n'
    "}}\n"
)

ES: dict[str, str] = {
    "DESCRIPTION_SYSTEM": (
        "Estás jugando a un juego de adivinar palabras. En la FASE DE DESCRIPCIÓN, SOLO debes describir tu "
        "palabra en 1-2 frases sin analizar a los demás. Guarda el análisis para la FASE DE VOTACIÓN."
    ),
    # the intro for a group of {others} + 1 players: one impostor, then several (docs/rules.md, "Group size")
    "INTRO_ONE": (
        "Estás participando en un juego de adivinar palabras. Tú y otros {others} jugadores tienen cada uno una "
        "palabra. {majority} jugadores (la mayoría) tienen la misma palabra, mientras que un jugador (el impostor) "
        "tiene una palabra diferente. El objetivo del impostor es pasar desapercibido y evitar ser descubierto, "
        "mientras que el objetivo de la mayoría es identificar al impostor.\n\n" + _ES_RULES
    ),
    "INTRO_MANY": (
        "Estás participando en un juego de adivinar palabras. Tú y otros {others} jugadores tienen cada uno una "
        "palabra. {majority} jugadores (la mayoría) tienen la misma palabra, mientras que {impostors} jugadores "
        "(los impostores) comparten una palabra diferente. El objetivo de los impostores es pasar desapercibidos "
        "y evitar ser descubiertos, mientras que el objetivo de la mayoría es identificar a un impostor.\n\n"
        + _ES_RULES
    ),
    "DESCRIPTION_TEAM_AWARE": _ES_TEAM_AWARE,
    "DESCRIPTION_TEAM_SEMI_AWARE": (
        "INFORMACIÓN DEL EQUIPO:\n"
        "- Tienes exactamente un compañero de equipo entre los otros 3 jugadores (emparejado contigo para esta "
        "partida)\n"
        "- No sabes qué jugador es tu compañero\n"
        "- Tu compañero puede compartir tu palabra O puede ser el impostor\n"
        "- Solo hay 1 impostor en total entre los 4 jugadores"
    ),
    "DESCRIPTION_PREVIOUS_HEADER": "Descripciones anteriores (solo como contexto - no las analices ahora):",
    "DESCRIPTION_YOU_ARE": "Eres el Jugador {player_position}.",
    "DESCRIPTION_YOU_ARE_FIRST": "Eres el Jugador {player_position} y hablarás primero.",
    "DESCRIPTION_OUTRO": (
        "Da SOLO tu descripción de tu palabra en 1-2 frases. No analices a los demás ni compartas tus "
        "ideas sobre el juego:"
    ),
    "VOTING_SYSTEM": "Estás jugando a un juego de adivinar palabras. Debes responder solo con JSON válido.",
    "VOTING_INTRO": "Basándote en las descripciones de abajo, identifica qué jugador tiene la palabra diferente.",
    "VOTING_INTRO_MANY": (
        "Basándote en las descripciones de abajo, identifica a uno de los jugadores que tienen la palabra diferente."
    ),
    "VOTING_TEAM_AWARE": _ES_TEAM_AWARE + "\n- Recuerda: si tu compañero es el impostor, gana si evita ser descubierto",
    "VOTING_TEAM_SEMI_AWARE": (
        "INFORMACIÓN DEL EQUIPO:\n"
        "- Tienes exactamente un compañero de equipo entre los otros 3 jugadores (emparejado contigo para esta "
        "partida)\n"
        "- Debes deducir quién es tu compañero a partir de las descripciones\n"
        "- Tu compañero puede compartir tu palabra O puede ser el impostor\n"
        "- Solo hay 1 impostor en total entre los 4 jugadores"
    ),
    "VOTING_JSON_FORMAT": (
        "Responde en el siguiente formato JSON:\n" + _JSON.format(explanation="explicación breve") + "\n"
        "Nota: confidence es un número decimal en [0, 1].\n"
        "Si crees que TÚ tienes la palabra diferente, pon self_declaration en true.\n"
        "Si crees que sabes cuál es la palabra de la mayoría (y eres el impostor), inclúyela en word_guess.\n"
        "Nota: word_guess solo se tiene en cuenta si pones self_declaration en true."
    ),
    "DESCRIPTION_RETRY": (
        "Tu descripción incumplió una regla: {violation}. Inténtalo de nuevo. Describe tu palabra en 1-2 frases, "
        "sin usar la palabra misma ni ninguna de sus formas, en como máximo {max_chars} caracteres."
    ),
    "VOTING_RETRY": (
        "Tu respuesta no se pudo usar: {error}. Responde de nuevo solo con JSON válido, exactamente en el "
        "formato JSON de arriba, con suspected_impostor_id igual al número de otro jugador."
    ),
    "WORD_IS": "Tu palabra es: {word}",
    "WORD_WAS": "Tu palabra era: {word}",
    "PLAYER": "Jugador {label}",
    "ALL_DESCRIPTIONS": "Todas las descripciones:",
    "ROUND_RULES": (
        "PARTIDA DE VARIAS RONDAS: esta es la ronda {round} de un máximo de {max_rounds}. Jugadores restantes: "
        "{remaining}.\n"
        "- En cada ronda cada jugador restante da una descripción NUEVA (nunca repitas una tuya anterior), y "
        "luego votan los jugadores restantes\n"
        "- El jugador con más votos queda eliminado; un empate no elimina a nadie\n"
        "- Un voto por ti mismo o por un jugador eliminado no cuenta\n"
        "- La mayoría gana cuando el impostor queda eliminado; el impostor gana cuando solo quedan dos jugadores "
        "o se acaban las rondas"
    ),
    "ROUND_HISTORY_HEADER": "RONDAS ANTERIORES (registro público):",
    "NOTES_HEADER": "TUS NOTAS PRIVADAS (solo tú puedes leerlas):",
    "AFTER_ROUND": "Tras la ronda {round}: {note}",
    "ROUND_DESCRIPTIONS": "Descripciones de la ronda {round}:",
    "ROUND_VOTES": "Votos de la ronda {round}: {votes}.",
    "VOTED": "{voter} votó por {target}",
    "NO_VALID_VOTE": "nadie (voto no válido)",
    "ROUND_OUT": "Resultado de la ronda {round}: {player} quedó eliminado y no era el impostor; la partida sigue.",
    "ROUND_NOBODY_OUT": "Resultado de la ronda {round}: nadie quedó eliminado; la partida sigue.",
    "NOTE_SYSTEM": (
        "Estás jugando a un juego de adivinar palabras. Entre rondas puedes guardar una nota privada breve para "
        "ti; ningún otro jugador la verá nunca."
    ),
    "NOTE_OUTRO": (
        "Escribe tu nota privada para la próxima ronda en como máximo {max_chars} caracteres: tus sospechas y "
        "tu plan. Responde solo con la nota:"
    ),
}

DE: dict[str, str] = {
    "DESCRIPTION_SYSTEM": (
        "Du spielst ein Wortratespiel. In der BESCHREIBUNGSPHASE darfst du dein Wort NUR in 1-2 Sätzen "
        "beschreiben, ohne die anderen zu analysieren. Heb dir die Analyse für die ABSTIMMUNGSPHASE auf."
    ),
    "INTRO_ONE": (
        "Du nimmst an einem Wortratespiel teil. Du und {others} andere Spieler habt jeweils ein Wort. "
        "{majority} Spieler (die Mehrheit) haben dasselbe Wort, während ein Spieler (der Betrüger) ein anderes "
        "Wort hat. Das Ziel des Betrügers ist es, nicht aufzufallen und unentdeckt zu bleiben, während das Ziel "
        "der Mehrheit ist, den Betrüger zu identifizieren.\n\n" + _DE_RULES
    ),
    "INTRO_MANY": (
        "Du nimmst an einem Wortratespiel teil. Du und {others} andere Spieler habt jeweils ein Wort. "
        "{majority} Spieler (die Mehrheit) haben dasselbe Wort, während {impostors} Spieler (die Betrüger) ein "
        "gemeinsames anderes Wort haben. Das Ziel der Betrüger ist es, nicht aufzufallen und unentdeckt zu "
        "bleiben, während das Ziel der Mehrheit ist, einen Betrüger zu identifizieren.\n\n" + _DE_RULES
    ),
    "DESCRIPTION_TEAM_AWARE": _DE_TEAM_AWARE,
    "DESCRIPTION_TEAM_SEMI_AWARE": (
        "TEAMINFORMATION:\n"
        "- Unter den anderen 3 Spielern hast du genau einen Teamkollegen (dir für dieses Spiel zugeteilt)\n"
        "- Du weißt nicht, welcher Spieler dein Teamkollege ist\n"
        "- Dein Teamkollege hat vielleicht dein Wort ODER ist vielleicht der Betrüger\n"
        "- Es gibt insgesamt nur 1 Betrüger unter allen 4 Spielern"
    ),
    "DESCRIPTION_PREVIOUS_HEADER": "Bisherige Beschreibungen (nur zur Information - analysiere sie jetzt nicht):",
    "DESCRIPTION_YOU_ARE": "Du bist Spieler {player_position}.",
    "DESCRIPTION_YOU_ARE_FIRST": "Du bist Spieler {player_position} und fängst an.",
    "DESCRIPTION_OUTRO": (
        "Gib NUR deine Beschreibung deines Wortes in 1-2 Sätzen. Analysiere die anderen nicht und teile keine "
        "Gedanken zum Spiel mit:"
    ),
    "VOTING_SYSTEM": "Du spielst ein Wortratespiel. Du musst ausschließlich mit gültigem JSON antworten.",
    "VOTING_INTRO": "Finde anhand der folgenden Beschreibungen heraus, welcher Spieler das andere Wort hat.",
    "VOTING_INTRO_MANY": (
        "Finde anhand der folgenden Beschreibungen einen der Spieler heraus, die das andere Wort haben."
    ),
    "VOTING_TEAM_AWARE": (
        _DE_TEAM_AWARE + "\n- Denk daran: Wenn dein Teamkollege der Betrüger ist, gewinnt er, indem er unentdeckt bleibt"
    ),
    "VOTING_TEAM_SEMI_AWARE": (
        "TEAMINFORMATION:\n"
        "- Unter den anderen 3 Spielern hast du genau einen Teamkollegen (dir für dieses Spiel zugeteilt)\n"
        "- Du musst aus den Beschreibungen ableiten, wer dein Teamkollege ist\n"
        "- Dein Teamkollege hat vielleicht dein Wort ODER ist vielleicht der Betrüger\n"
        "- Es gibt insgesamt nur 1 Betrüger unter allen 4 Spielern"
    ),
    "VOTING_JSON_FORMAT": (
        "Bitte antworte im folgenden JSON-Format:\n" + _JSON.format(explanation="kurze Begründung") + "\n"
        "Hinweis: confidence ist eine Gleitkommazahl in [0, 1].\n"
        "Wenn du glaubst, dass DU das andere Wort hast, setze self_declaration auf true.\n"
        "Wenn du glaubst, das Wort der Mehrheit zu kennen (und du der Betrüger bist), gib es in word_guess an.\n"
        "Hinweis: word_guess wird nur berücksichtigt, wenn du self_declaration auf true setzt."
    ),
    "DESCRIPTION_RETRY": (
        "Deine Beschreibung hat gegen eine Regel verstoßen: {violation}. Versuche es noch einmal. Beschreibe dein "
        "Wort in 1-2 Sätzen, ohne das Wort selbst oder eine Form davon zu verwenden, in höchstens {max_chars} "
        "Zeichen."
    ),
    "VOTING_RETRY": (
        "Deine Antwort konnte nicht verwendet werden: {error}. Antworte noch einmal ausschließlich mit gültigem "
        "JSON, genau im obigen JSON-Format, mit suspected_impostor_id gleich der Nummer eines anderen Spielers."
    ),
    "WORD_IS": "Dein Wort ist: {word}",
    "WORD_WAS": "Dein Wort war: {word}",
    "PLAYER": "Spieler {label}",
    "ALL_DESCRIPTIONS": "Alle Beschreibungen:",
    "ROUND_RULES": (
        "SPIEL ÜBER MEHRERE RUNDEN: Dies ist Runde {round} von höchstens {max_rounds}. Verbleibende Spieler: "
        "{remaining}.\n"
        "- In jeder Runde gibt jeder verbleibende Spieler eine NEUE Beschreibung (wiederhole nie eine eigene "
        "frühere), danach stimmen die verbleibenden Spieler ab\n"
        "- Der Spieler mit den meisten Stimmen scheidet aus; bei Gleichstand scheidet niemand aus\n"
        "- Eine Stimme für dich selbst oder für einen ausgeschiedenen Spieler zählt nicht\n"
        "- Die Mehrheit gewinnt, wenn der Betrüger ausscheidet; der Betrüger gewinnt, wenn nur noch zwei Spieler "
        "übrig sind oder die Runden aufgebraucht sind"
    ),
    "ROUND_HISTORY_HEADER": "FRÜHERE RUNDEN (öffentliches Protokoll):",
    "NOTES_HEADER": "DEINE PRIVATEN NOTIZEN (nur du kannst sie lesen):",
    "AFTER_ROUND": "Nach Runde {round}: {note}",
    "ROUND_DESCRIPTIONS": "Beschreibungen in Runde {round}:",
    "ROUND_VOTES": "Stimmen in Runde {round}: {votes}.",
    "VOTED": "{voter} stimmte für {target}",
    "NO_VALID_VOTE": "niemanden (keine gültige Stimme)",
    "ROUND_OUT": "Ergebnis von Runde {round}: {player} ist ausgeschieden und war nicht der Betrüger; das Spiel geht "
                 "weiter.",
    "ROUND_NOBODY_OUT": "Ergebnis von Runde {round}: niemand ist ausgeschieden; das Spiel geht weiter.",
    "NOTE_SYSTEM": (
        "Du spielst ein Wortratespiel. Zwischen den Runden darfst du dir eine kurze private Notiz machen; kein "
        "anderer Spieler sieht sie je."
    ),
    "NOTE_OUTRO": (
        "Schreibe deine private Notiz für die nächste Runde in höchstens {max_chars} Zeichen: deinen Verdacht "
        "und deinen Plan. Antworte nur mit der Notiz:"
    ),
}

#: Translations by language code (English is ``prompts``' own texts).
TEXTS: dict[str, dict[str, str]] = {"es": ES, "de": DE}

#: Group sizes in words (index = the number), for the intros of other group sizes.
NUMBER_WORDS: dict[str, tuple[str, ...]] = {
    "es": ("ningún", "un", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho"),
    "de": ("kein", "ein", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht"),
}

# The rule messages a player is re-prompted with (descriptions.py, rounds.py), each with its
# translation: the tables keep the English text (description_error), the player reads its language.
_REASONS: tuple[tuple[re.Pattern[str], dict[str, Callable[[re.Match[str]], str]]], ...] = (
    (re.compile(r'the description contains your word \("(?P<form>.*)"\)', re.DOTALL), {
        "es": lambda m: f'la descripción contiene tu palabra ("{m["form"]}")',
        "de": lambda m: f'die Beschreibung enthält dein Wort ("{m["form"]}")'}),
    (re.compile(r"the description is (?P<n>\d+) characters long(?P<more> or more)?; the limit is (?P<limit>\d+)"), {
        "es": lambda m: f"la descripción tiene {m['n']} caracteres{' o más' if m['more'] else ''}; el límite es "
                        f"{m['limit']}",
        "de": lambda m: f"die Beschreibung ist {m['n']} Zeichen lang{' oder länger' if m['more'] else ''}; die "
                        f"Grenze liegt bei {m['limit']}"}),
    (re.compile(r"the description is empty"), {
        "es": lambda m: "la descripción está vacía", "de": lambda m: "die Beschreibung ist leer"}),
    (re.compile(r"it repeats your description from round (?P<r>\d+); give a new one"), {
        "es": lambda m: f"repite tu descripción de la ronda {m['r']}; da una nueva",
        "de": lambda m: f"sie wiederholt deine Beschreibung aus Runde {m['r']}; gib eine neue"}),
)


def reason(text: str, language: str) -> str:
    """A rule message in ``language`` when it is one of the description rules' (a leak, the
    length, an empty or repeated text); any other message (a ballot's parse error, which quotes
    the JSON keys) as written."""
    for pattern, by_language in _REASONS:
        m = pattern.fullmatch(text)
        if m is not None and language in by_language:
            return by_language[language](m)
    return text
