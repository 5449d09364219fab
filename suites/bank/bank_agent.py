"""A small deterministic bank agent whose tools write to a real database: no model, no API key.

Each conversation gets its own SQLite database (a temporary file named after `context.conversation_id`,
so cases that run side by side, or the same case under --repeat, never share rows). The agent reads the
user's latest message; for every "<amount> from <account> to <account>" in it, it calls its
`transfer_funds` tool, which moves the money and writes a row to `transfers` (or refuses when the
balance is too low). `state(context)` is called by evalrun once the conversation is over: it returns
the rows, which the suite's `final_state:` is compared with, and removes the database.
"""
from __future__ import annotations

import json
import os
import re
import sqlite3
import tempfile
from pathlib import Path

OPENING_BALANCES = {"A-100": ("Ada", 500.0), "B-200": ("Ben", 100.0), "C-300": ("Cy", 50.0)}

_TRANSFER = re.compile(r"(\d+(?:\.\d+)?)\s*(?:dollars\s+)?from\s+([A-Z]-\d+)\s+to\s+([A-Z]-\d+)", re.IGNORECASE)


def respond(messages: list[dict], context) -> list[dict] | str:
    latest = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    asked = _TRANSFER.findall(latest if isinstance(latest, str) else "")
    if not asked:
        return "I can move money between accounts: tell me the amount, the account it comes from and where it goes."
    new, done = [], []
    with _database(context.conversation_id) as db:
        for n, (amount, source, target) in enumerate(asked, start=1):
            call_id = f"t{context.turn}-{n}"
            arguments = {"from_account": source.upper(), "to_account": target.upper(), "amount": float(amount)}
            new.append(_call(call_id, "transfer_funds", arguments))
            result = transfer_funds(db, **arguments)
            new.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(result)})
            done.append(result)
    lines = [f"Sent {r['amount']:g} from {r['from_account']} to {r['to_account']} (transfer {r['transfer_id']})."
             if "transfer_id" in r else f"I could not send that: {r['error']}." for r in done]
    new.append({"role": "assistant", "content": " ".join(lines)})
    return new


def transfer_funds(db: sqlite3.Connection, from_account: str, to_account: str, amount: float) -> dict:
    """The tool: move `amount` and record the transfer, all or nothing."""
    row = db.execute("SELECT balance FROM accounts WHERE id = ?", (from_account,)).fetchone()
    if row is None or db.execute("SELECT 1 FROM accounts WHERE id = ?", (to_account,)).fetchone() is None:
        return {"error": f"no account {from_account if row is None else to_account}"}
    if row[0] < amount:
        return {"error": f"insufficient funds in {from_account} (balance {row[0]:g})"}
    with db:
        db.execute("UPDATE accounts SET balance = balance - ? WHERE id = ?", (amount, from_account))
        db.execute("UPDATE accounts SET balance = balance + ? WHERE id = ?", (amount, to_account))
        cursor = db.execute("INSERT INTO transfers (from_account, to_account, amount) VALUES (?, ?, ?)",
                            (from_account, to_account, amount))
    return {"transfer_id": cursor.lastrowid, "from_account": from_account, "to_account": to_account, "amount": amount}


def state(context) -> dict:
    """The rows after the conversation, as evalrun compares them with `final_state:`."""
    path = _path(context.conversation_id)
    with _database(context.conversation_id) as db:
        accounts = {account: {"owner": owner, "balance": balance}
                    for account, owner, balance in db.execute("SELECT id, owner, balance FROM accounts ORDER BY id")}
        transfers = [{"id": id_, "from_account": source, "to_account": target, "amount": amount}
                     for id_, source, target, amount in db.execute(
                         "SELECT id, from_account, to_account, amount FROM transfers ORDER BY id")]
    os.remove(path)
    return {"accounts": accounts, "transfers": transfers}


class _database:
    """The conversation's database, created with the opening balances on first use."""

    def __init__(self, conversation_id: str):
        self.path = _path(conversation_id)

    def __enter__(self) -> sqlite3.Connection:
        fresh = not self.path.exists()
        self.db = sqlite3.connect(self.path)
        if fresh:
            with self.db:
                self.db.execute("CREATE TABLE accounts (id TEXT PRIMARY KEY, owner TEXT, balance REAL NOT NULL)")
                self.db.execute("CREATE TABLE transfers (id INTEGER PRIMARY KEY AUTOINCREMENT, from_account TEXT, "
                                "to_account TEXT, amount REAL NOT NULL)")
                self.db.executemany("INSERT INTO accounts VALUES (?, ?, ?)",
                                    [(a, owner, balance) for a, (owner, balance) in OPENING_BALANCES.items()])
        return self.db

    def __exit__(self, *exc) -> None:
        self.db.close()


def _path(conversation_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", conversation_id) or "default"
    return Path(tempfile.gettempdir()) / f"evalrun-bank-{safe}.sqlite"


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}
