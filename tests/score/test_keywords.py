"""The keyword check of text goals (runner/score/keywords.py)."""
from __future__ import annotations

import pytest

from runner.score.keywords import missing_keywords


def test_all_present_case_insensitive():
    assert missing_keywords("Your time off starts on 2025-01-05 in PARIS.", ["2025-01-05", "paris", "Time Off"]) == []


def test_missing_ones_in_the_given_order():
    assert missing_keywords("hello world", ["zeta", "hello", "alpha"]) == ["zeta", "alpha"]


def test_no_keywords():
    assert missing_keywords("anything", []) == []


def test_empty_text():
    assert missing_keywords("", ["a"]) == ["a"]


@pytest.mark.parametrize("keyword, text", [
    ("1000", "The total is 1,000 dollars."),
    ("1234567", "Population: 1,234,567."),
    ("1000.5", "You owe 1,000.5 EUR"),
    ("1000", "The total is 1000 dollars."),
    ("123456", "id 123,456"),
])
def test_numbers_match_with_thousands_separators(keyword, text):
    assert missing_keywords(text, [keyword]) == []


@pytest.mark.parametrize("keyword, text", [
    ("1000", "The total is 1.000 dollars."),  # European separators are not recognised
    ("1000", "1,0,0,0"),
    ("007", "agent 7"),  # leading zeros are kept
])
def test_number_forms_are_not_loose(keyword, text):
    assert missing_keywords(text, [keyword]) == [keyword]


def test_word_keywords_are_plain_containment():
    assert missing_keywords("The schedule is ready", ["sched"]) == []


@pytest.mark.parametrize("text, keyword, found", [
    ("Your balance is 15000.", "1500", False),
    ("Your balance is 21,500.", "500", False),
    ("It costs 1500.5 dollars", "1500", False),
    ("It costs $1,500.", "1500", True),
    ("It costs $1500, payable now", "1500", True),
    ("Total: 1500", "1500", True),
    ("Reservation 1500A confirmed", "1500", True),  # a letter does not continue a number
    ("Your reservation was cancelled", "cancel", True),  # words are found anywhere
])
def test_a_number_keyword_stands_as_a_whole_number(text, keyword, found):
    assert (missing_keywords(text, [keyword]) == []) is found


@pytest.mark.parametrize("keyword, text, found", [
    ("1500", "It costs €1,500.00 in total.", True),
    ("1500", "It costs 1500.00 in total.", True),
    ("1500", "It costs 1,500 in total.", True),
    ("1,500", "It costs 1500 in total.", True),
    ("1500.5", "You owe 1,500.50 EUR", True),
    ("1500", "It costs 15000 in total.", False),
    ("1500", "It costs 1500.5 in total.", False),
    ("1500", "It costs 1500.01 in total.", False),
    ("1500.5", "You owe 1,500.05 EUR", False),
    ("5", "on 2025-01-05", False),  # "05" is written with a leading zero: not the amount 5
    ("007", "agent 007 reporting", True),
])
def test_a_number_keyword_matches_the_same_amount_however_written(keyword, text, found):
    assert (missing_keywords(text, [keyword]) == []) is found


ANSWER = "Your timeoff schedule for January 1, 2025 to March 3, 2025 is on January 5, 2025."


@pytest.mark.parametrize("keyword", ["20250105", "2025-01-05", "January 5, 2025", "5 Jan 2025", "01/05/2025",
                                     "2025/1/5", "jan 5th 2025"])
def test_a_date_keyword_matches_the_same_day_in_another_format(keyword):
    assert missing_keywords(ANSWER, [keyword]) == []


@pytest.mark.parametrize("keyword, text", [
    ("20250106", ANSWER),                      # another day
    ("2025-05-01", "It is on 01/05/2025."),   # 01/05/2025 is read month first (January 5), never guessed
    ("20250105", "Reference 120250105."),     # digits inside a longer number are not a date
    ("2025-01-05", "It is on January 15, 2025."),
])
def test_a_date_keyword_does_not_match_another_day(keyword, text):
    assert missing_keywords(text, [keyword]) == [keyword]


def test_a_date_keyword_found_as_written_too():
    assert missing_keywords("schedule: 20250105", ["20250105"]) == []
    assert missing_keywords("the 2025-01-05T10:00Z slot", ["2025-01-05"]) == []
