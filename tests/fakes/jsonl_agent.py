"""A tiny agent speaking JSON lines on stdin/stdout, for the `command` target's tests.

    python jsonl_agent.py MODE

MODE: echo (answers "you said: <last user message>"), completion (answers as a chat completion),
crash2 (writes to stderr and exits 3 on turn 2), garbage2 (prints a non-JSON line on turn 2),
sleep (never answers), stop (answers and ends the conversation), env (answers with $AGENT_TOKEN's
length and writes the token to stderr), child (starts a sleeping child process, prints its pid on
stderr, then never answers), orphan (answers turn 1 after starting a sleeping child that holds its
pipes, prints the child's pid on stderr, and exits), escape (the same, but the child leaves the process
group with setsid), envnames (answers with the sorted names of its environment variables).
"""
import json
import os
import subprocess
import sys
import time


def main(mode: str) -> None:
    print(f"agent started in mode {mode}", file=sys.stderr, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        turn = request["turn"]
        last = request["messages"][-1]["content"]
        print(f"turn {turn}: {last}", file=sys.stderr, flush=True)
        answer = {"messages": [{"role": "assistant", "content": f"you said: {last}"}]}
        if mode == "completion":
            answer = {"id": "x", "object": "chat.completion",
                      "choices": [{"index": 0, "message": {"role": "assistant", "content": f"you said: {last}"},
                                   "finish_reason": "stop"}]}
        elif mode == "crash2" and turn == 2:
            print("Traceback (most recent call last):\nRuntimeError: the database is down", file=sys.stderr, flush=True)
            sys.exit(3)
        elif mode == "garbage2" and turn == 2:
            print("thinking about it...", flush=True)
            continue
        elif mode == "sleep":
            time.sleep(3600)
        elif mode == "stop":
            answer["stop"] = True
        elif mode == "env":
            token = os.environ.get("AGENT_TOKEN", "")
            print(f"token is {token}", file=sys.stderr, flush=True)
            answer = {"messages": [{"role": "assistant", "content": f"token length {len(token)}"}]}
        elif mode in ("orphan", "escape"):
            setsid = "import os; os.setsid(); " if mode == "escape" else ""
            child = subprocess.Popen([sys.executable, "-c", setsid + "import time; time.sleep(3600)"])
            print(f"child pid {child.pid}", file=sys.stderr, flush=True)
            print(json.dumps(answer), flush=True)
            os._exit(0)  # no goodbye to the child: it keeps stdout and stderr open
        elif mode == "envnames":
            answer = {"messages": [{"role": "assistant", "content": " ".join(sorted(os.environ))}]}
        elif mode == "child":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
            print(f"child pid {child.pid}", file=sys.stderr, flush=True)
            time.sleep(3600)
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
