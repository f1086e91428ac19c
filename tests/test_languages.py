"""Games in Spanish and German (-T language): word-pair files, the leak rule's inflections,
the pair check at load.  English stays the paper's rule (tests/test_parsing.py, golden games)."""

from __future__ import annotations

import json

import pytest

from impostor_bench.core.descriptions import description_violation, find_word_leak
from impostor_bench.core.errors import ImpostorError
from impostor_bench.core.inflections import forms, guess_forms
from impostor_bench.core.languages import LANGUAGES, language_of
from impostor_bench.core.wordpairs import TIERS, WordPairError, default_word_pairs_path, load_word_pairs


@pytest.mark.parametrize("language", ["es", "de"])
def test_shipped_files_have_the_four_tiers_and_no_pair_is_refused(language):
    tiers = load_word_pairs(language=language)  # require_full: every tier exactly its count
    assert list(tiers) == list(TIERS)
    assert all(len(pairs) == LANGUAGES[language].pairs_per_tier >= 25 for pairs in tiers.values())
    assert default_word_pairs_path(language).name == f"word_pairs_{language}.json"
    # the words as written in the file (German nouns keep their capital, accents kept)
    raw = json.loads(default_word_pairs_path(language).read_text(encoding="utf-8"))
    assert [[p.majority, p.impostor] for p in tiers["hard"]] == raw["hard"]


@pytest.mark.parametrize(("text", "word"), [
    ("Los gatos duermen al sol.", "gato"),  # plural -s
    ("Una gata negra.", "gato"),  # feminine
    ("Unas gatas blancas.", "gato"),  # feminine plural
    ("Las luces de la ciudad.", "luz"),  # -z -> -ces
    ("Dos lápices rotos.", "lápiz"),  # -z -> -ces, accent on the word
    ("Unos lapices.", "lápiz"),  # written without the accent
    ("Los mares del sur.", "mar"),  # consonant -> -es
    ("Las canciones de verano.", "canción"),  # the accent moves in the plural
    ("Es muy rápida.", "rápido"),  # an adjective's gender
    ("Una profesora.", "profesor"),  # -or -> -ora
    ("G-A-T-O-S en la calle.", "gato"),  # a plural spelled out
])
def test_spanish_plurals_and_gender_forms_leak(text, word):
    assert find_word_leak(text, word, "es") is not None
    assert description_violation(text, word, language="es").kind == "leak"


@pytest.mark.parametrize(("text", "word"), [
    ("Viele Häuser stehen hier.", "Haus"),  # umlaut plural -er
    ("Das Dach des Hauses.", "Haus"),  # genitive -es
    ("Im Hause.", "Haus"),  # dative -e
    ("Die Haeuser.", "Haus"),  # umlaut written out
    ("Zwei Äpfel.", "Apfel"),  # umlaut plural, no ending
    ("Mit den Äpfeln.", "Apfel"),  # dative plural -n
    ("Die Hunde bellen.", "Hund"),  # plural -e
    ("Des Hundes Knochen.", "Hund"),  # genitive -es
    ("Rote Rosen.", "Rose"),  # plural -n
    ("Breite Straßen.", "Straße"),  # plural of an ß word
    ("Eine breite Strasse.", "Straße"),  # ß written ss
    ("Die Autos.", "Auto"),  # plural -s
    ("Das größte Tier.", "groß"),  # superlative with umlaut
    ("Er ist schneller.", "schnell"),  # comparative
    ("Ein schnelles Auto.", "schnell"),  # adjective declension
    ("Die Ärztinnen.", "Ärztin"),  # -in -> -innen
])
def test_german_plurals_and_case_forms_leak(text, word):
    assert find_word_leak(text, word, "de") is not None
    assert description_violation(text, word, language="de").kind == "leak"


@pytest.mark.parametrize(("text", "word", "language"), [
    ("El soldado descansa.", "sol", "es"),  # a word that merely starts with the word
    ("La pantalla grande.", "pan", "es"),
    ("Un marco de madera.", "mar", "es"),
    ("Solo una vez.", "sol", "es"),
    ("Un libro de gatitos.", "gato", "es"),  # a derivation (diminutive) is another word
    ("Hundert Jahre.", "Hund", "de"),
    ("Rosenkohl schmeckt.", "Rose", "de"),  # a compound, written as one word
    ("Die Haustür ist offen.", "Haus", "de"),
    ("Eine Seele.", "See", "de"),
    ("Die Armee marschiert.", "Arm", "de"),
])
def test_words_sharing_a_prefix_are_not_leaks(text, word, language):
    assert find_word_leak(text, word, language) is None
    assert description_violation(text, word, language=language) is None


def test_each_language_reads_only_its_own_endings():
    assert find_word_leak("una gata", "gato", "en") is None  # English has no gender endings
    assert find_word_leak("una gata", "gato", "es") == "gata"
    assert find_word_leak("the cats", "cat", "en") == "cats"
    assert find_word_leak("catting", "cat", "es") is None  # nor Spanish English's -ing
    assert find_word_leak("die Katzen", "Katze", "de") == "Katzen"


def test_forms_are_read_as_text_is_read():
    assert "hauser" in forms("Haus", "de") and "haeuser" in forms("Haus", "de")
    assert set(forms("Straße", "de")) >= {"strasse", "strassen"}
    assert set(forms("gato", "es")) == {"gato", "gatos", "gata", "gatas"}
    assert set(forms("luz", "es")) == {"luz", "luces"}
    assert guess_forms("Apfel", "de") >= {"apfel", "apfeln", "aepfel"}
    assert "apfels" in guess_forms("Apfel", "de") and "apfelste" not in guess_forms("Apfel", "de")


def _pair_file(tmp_path, language, pairs):
    path = tmp_path / f"pairs_{language}.json"
    path.write_text(json.dumps({"hard": pairs}, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("language", "pair"), [
    ("es", ["gato", "gatos"]), ("es", ["luz", "luces"]), ("es", ["rápido", "rápida"]),
    ("es", ["canción", "canciones"]),
    ("de", ["Haus", "Häuser"]), ("de", ["Straße", "Strasse"]), ("de", ["Apfel", "Äpfel"]),
    ("de", ["Hund", "Hunde"]), ("de", ["Haus", "Haeuser"]), ("de", ["schnell", "schnellste"]),
])
def test_an_inflection_pair_is_refused_per_language(tmp_path, language, pair):
    """Refused as one word: a form of the other, containing it, or the same word once accents and
    case are read as the rules read them (Äpfel is Apfel to a reader)."""
    with pytest.raises(WordPairError, match="is a form of|contains the other|are both") as err:
        load_word_pairs(_pair_file(tmp_path, language, [pair]), require_full=False, language=language)
    assert "\n" not in str(err.value)
    # the same pair read with the other language's endings is two words (or a bad word)
    ok = load_word_pairs(_pair_file(tmp_path, language, [["perro", "gato"] if language == "es" else ["Hund", "Katze"]]),
                         require_full=False, language=language)
    assert len(ok["hard"]) == 1


def test_the_inflection_check_itself_refuses_what_containment_does_not(tmp_path):
    for language, pair in (("es", ["luz", "luces"]), ("es", ["rápido", "rápidas"]), ("de", ["Haus", "Haeuser"])):
        with pytest.raises(WordPairError, match="is a form of"):
            load_word_pairs(_pair_file(tmp_path, language, [pair]), require_full=False, language=language)


def test_words_are_checked_with_the_languages_letters(tmp_path):
    with pytest.raises(WordPairError, match="not one Spanish word") as err:
        load_word_pairs(_pair_file(tmp_path, "es", [["Gato", "perro"]]), require_full=False, language="es")
    assert "\n" not in str(err.value)
    with pytest.raises(WordPairError, match="not one German word"):
        load_word_pairs(_pair_file(tmp_path, "de", [["HUND", "Katze"]]), require_full=False, language="de")
    with pytest.raises(WordPairError, match="a-z only"):  # English as before
        load_word_pairs(_pair_file(tmp_path, "en", [["café", "tea"]]), require_full=False)
    assert load_word_pairs(_pair_file(tmp_path, "es", [["pingüino", "ñandú"]]), require_full=False,
                           language="es")["hard"][0].impostor == "ñandú"


def test_a_pair_duplicated_up_to_case_and_accents_is_refused(tmp_path):
    with pytest.raises(WordPairError, match="already used"):
        load_word_pairs(_pair_file(tmp_path, "de", [["Fluss", "Bach"], ["fluss", "Strom"]]), require_full=False,
                        language="de")


def test_an_unshipped_language_is_one_line_naming_the_shipped():
    with pytest.raises(ImpostorError) as err:
        language_of("fr")
    assert str(err.value) == "language 'fr' is not shipped; use one of: en (English), es (Spanish), de (German)"


def test_the_experiment_identity_names_a_language_other_than_english():
    from impostor_bench.core.experiment import experiment_id

    assert experiment_id("homogeneous", "easy", {"all": "m"}, 0) == "homogeneous|easy|m|s0"
    assert experiment_id("homogeneous", "easy", {"all": "m"}, 0, language="en") == "homogeneous|easy|m|s0"
    assert experiment_id("homogeneous", "easy", {"all": "m"}, 0, language="es") == "homogeneous|easy|m|s0|es"
    assert experiment_id("homogeneous", "hard", {"all": "m"}, 1, 3, players=6, impostors=2,
                         language="de") == "homogeneous|hard|m|s1|r3|p6k2|de"


def test_the_language_option_is_left_out_of_english_task_args_and_refuses_an_unshipped_one():
    from pydantic import ValidationError

    from impostor_bench.core.options import GameOptions, task_option_message

    assert "language" not in GameOptions().task_args()  # the paper's task args and sweep hashes unchanged
    assert GameOptions(language="de").task_args()["language"] == "de"
    with pytest.raises(ValidationError) as err:
        GameOptions(language="fr")
    assert task_option_message(GameOptions, err.value.errors()[0]) == (
        "-T language='fr' is not valid; use one of the shipped languages: en (English), es (Spanish), de (German)")


def test_an_export_without_the_language_column_reads_as_english():
    from impostor_bench.analysis.sim.simulate import simulate_games
    from impostor_bench.analysis.validate import validate_tables

    games, players, models = simulate_games(4, 4, seed=3)
    games = games.drop(columns=["language"], errors="ignore")
    assert set(validate_tables(games, players, models).games["language"]) == {"en"}
    games["language"] = ["es", None] * (len(games) // 2)
    assert validate_tables(games, players, models).games["language"].tolist() == ["es", "en"] * (len(games) // 2)


def test_a_small_sharp_s_reads_as_a_small_ss():
    from impostor_bench.core.glyphs import readings

    assert readings("Straße") == ["Strasse"]
    assert find_word_leak("Ein Spaß.", "spa") is None  # as "SpaSS" it was a camelCase join after "Spa"
    assert find_word_leak("Viel Spaß!", "Spaß", "de") == "Spaß"
