"""`hexmcp config check` never prints a secret: properties of the masking it applies to every value."""

from __future__ import annotations

from hypothesis import given, strategies as st

from hexmcp.app.commands.config_check import MASK, masked, masked_tree

SECRET_WORDS = ("token", "key", "secret", "password")
NAME_PART = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", max_size=8)
SECRET_NAME = st.builds(lambda before, word, upper: before + (word.upper() if upper else word),
                        NAME_PART, st.sampled_from(SECRET_WORDS), st.booleans())
PLAIN_NAME = NAME_PART.filter(lambda name: not any(word in name for word in SECRET_WORDS))
SECRET_WORD_INSIDE = st.builds(lambda before, word, after: before + word + "_" + after, NAME_PART,
                               st.sampled_from(SECRET_WORDS), st.sampled_from(["name", "file", "s"]))
SECRET = st.text(min_size=1, max_size=30)


@given(SECRET_NAME, st.one_of(SECRET, st.lists(SECRET, min_size=1), st.integers()))
def test_a_setting_named_as_a_secret_is_masked_whole(name: str, value: object) -> None:
    assert masked(name, value) == MASK


@given(PLAIN_NAME.filter(lambda name: name != "nested"), st.sampled_from(["http", "https", "ws", "qdrant+http"]),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:%", min_size=1, max_size=30))
def test_credentials_in_a_url_are_masked_wherever_it_sits(name: str, scheme: str, credentials: str) -> None:
    url, shown = (f"{scheme}://{userinfo}@db.example:6333/v1" for userinfo in (credentials, MASK))
    assert masked_tree({name: url, "nested": {name: [url]}}) == {name: shown, "nested": {name: [shown]}}


@given(PLAIN_NAME, st.one_of(st.none(), st.booleans(), st.integers(), st.text(alphabet="abc/.: ", max_size=20)))
def test_anything_else_is_shown_as_it_is(name: str, value: object) -> None:
    assert masked(name, value) == value


@given(SECRET_WORD_INSIDE, st.one_of(st.none(), st.integers(), st.text(alphabet="abc/.: ", max_size=20)))
def test_a_name_that_only_contains_a_secret_word_is_shown(name: str, value: object) -> None:
    assert masked(name, value) == value  # auth_token_name, auth_token_file, max_tokens: not secrets


@given(SECRET_NAME, st.booleans())
def test_a_switch_named_for_a_secret_is_shown(name: str, value: bool) -> None:
    assert masked(name, value) is value
