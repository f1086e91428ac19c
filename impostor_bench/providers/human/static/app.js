// The human/web page: polls the game's state, shows the current move, sends the answer.
// It checks nothing the game does not: the engine applies its rules to what is sent.
"use strict";
const token = new URLSearchParams(location.search).get("t") || "";
const $ = (id) => document.getElementById(id);
let current = null;   // id of the move on screen
const sent = new Set(); // moves answered from this page
let sending = false;

function setStatus(text) { if ($("status").textContent !== text) $("status").textContent = text; }

function item(text) { const li = document.createElement("li"); li.textContent = text; return li; }

async function fetchState() {
  let r;
  try {
    const shown = $("outcome").hidden ? "" : "&shown=outcome";  // lets the game's process end
    r = await fetch("/state?t=" + encodeURIComponent(token) + shown, { cache: "no-store" });
  } catch (e) {
    setStatus(!$("outcome").hidden ? "The game is over; its server has stopped." :
              "Lost contact with the game server. Your moves so far are kept; " +
              "if the game is still running, reload this page.");
    return;
  }
  if (!r.ok) {
    setStatus(r.status === 403 ? "Wrong or missing token: open the URL printed in the terminal."
                               : "The game server answered " + r.status + ".");
    return;
  }
  render(await r.json());
}

function describeHistory(h) {
  const what = { description: "Description", vote: "Vote", note: "Private note" }[h.phase] || h.phase;
  if (h.status === "timed out") return what + " as Player " + h.player + ": no answer in time (recorded as missing)";
  return what + " as Player " + h.player + " (" + h.seconds + " s): " + h.text;
}

function render(state) {
  $("who").textContent = "You play as human/" + state.participant + ".";
  const hist = $("history");
  if (hist.children.length !== state.history.length) {
    hist.replaceChildren(...state.history.map((h) => item(describeHistory(h))));
  }
  const m = state.move && !sent.has(state.move.id) ? state.move : null;
  if (m) {
    $("waiting").hidden = true;
    $("outcome").hidden = true;
    if (m.id !== current) showMove(m);
    const clock = $("clock");
    clock.hidden = m.seconds_left === null;
    if (m.seconds_left !== null) clock.textContent = "Time left for this move: " + m.seconds_left + " s";
    $("queue").hidden = !state.waiting_moves;
    $("queue").textContent = state.waiting_moves ? state.waiting_moves + " more of your moves wait after this one." : "";
    return;
  }
  current = null;
  $("move").hidden = true;
  if (state.finished) {
    $("waiting").hidden = true;
    if ($("outcome").hidden) {
      $("outcome-text").textContent = state.finished;
      $("outcome").hidden = false;
      $("outcome-title").focus();
    }
    setStatus("The game is over.");
  } else {
    $("waiting").hidden = false;
    setStatus("Waiting for the other players…");
  }
}

function showMove(m) {
  current = m.id;
  const vote = m.phase === "vote";
  const note = m.phase === "note";
  const round = m.round_context ? " (round " + m.round + ")" : "";
  $("move-title").textContent = (vote ? "Your vote" : note ? "Your private note" : "Your description") + round +
    ": you are Player " + m.player;
  $("round-box").hidden = !m.round_context;
  $("round-context").textContent = m.round_context || "";
  $("word").textContent = m.word;
  $("desc-title").textContent = vote ? "All descriptions, in speaking order" :
    note ? "Descriptions of the round just played" : "Descriptions so far, in speaking order";
  $("rules").textContent = m.rules;
  $("team").hidden = !m.team;
  $("team").textContent = m.team || "";
  $("retry").hidden = !m.retry_reason;
  $("retry").textContent = m.retry_reason ? "The game did not accept your last answer: " + m.retry_reason + ". Try again." : "";
  const descs = m.descriptions.map(([n, text]) => item("Player " + n + ": " + text));
  if (!descs.length) descs.push(item(note ? "None." : "No one has spoken yet: you go first."));
  $("descriptions").replaceChildren(...descs);
  $("describe").hidden = vote;
  $("vote").hidden = !vote;
  $("move").hidden = false;
  let first;
  if (vote) {
    const box = $("candidates");
    box.replaceChildren();
    for (const n of m.candidates) {
      const row = document.createElement("div");
      row.className = "row";
      const input = document.createElement("input");
      Object.assign(input, { type: "radio", name: "suspect", value: String(n), id: "suspect-" + n });
      const label = document.createElement("label");
      label.htmlFor = input.id;
      label.textContent = "Player " + n;
      row.append(input, label);
      box.append(row);
    }
    $("self_declaration").checked = false;
    $("word_guess").value = "";
    $("reasoning").value = "";
    $("confidence").replaceChildren(...m.confidence_choices.map((c) => {
      const o = document.createElement("option");
      o.value = c;
      o.textContent = c === "" ? "Not saying" : c + " %";
      return o;
    }));
    first = box.querySelector("input");
    setStatus("Your turn: vote as Player " + m.player + ".");
  } else {
    $("description").value = "";
    $("max-chars").textContent = String(m.max_chars);
    $("description-label").textContent = note ?
      "A note for yourself for the next round (only you will see it), at most " + m.max_chars + " characters" :
      "Describe your word in 1–2 sentences, without saying it";
    $("description-rule").hidden = note;
    $("describe-send").textContent = note ? "Keep note" : "Send description";
    count();
    first = $("description");
    setStatus(note ? "Your turn: write a private note as Player " + m.player + "." :
              "Your turn: describe your word as Player " + m.player + ".");
  }
  (first || $("move-title")).focus();
}

function count() {
  $("description-count").textContent = $("description").value.length + " characters typed";
}

async function send(fields) {
  if (sending || !current) return;
  sending = true;
  const id = current;
  try {
    const r = await fetch("/answer?t=" + encodeURIComponent(token), {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ id, fields }),
    });
    const body = await r.json();
    if (r.ok) {
      sent.add(id);
      setStatus("Sent. Waiting for the game…");
    } else {
      setStatus("Not sent: " + body.error);
    }
  } catch (e) {
    setStatus("Not sent: lost contact with the game server. Reload this page to continue.");
  } finally {
    sending = false;
    await fetchState();
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("description").addEventListener("input", count);
  $("description").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("describe").requestSubmit();
    }
  });
  $("describe").addEventListener("submit", (e) => {
    e.preventDefault();
    send({ description: $("description").value });
  });
  $("vote").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.tagName === "INPUT") {
      e.preventDefault();
      $("vote").requestSubmit();
    }
  });
  $("vote").addEventListener("submit", (e) => {
    e.preventDefault();
    const chosen = $("vote").querySelector("input[name=suspect]:checked");
    send({
      suspect: chosen ? chosen.value : "",
      self_declaration: $("self_declaration").checked,
      word_guess: $("word_guess").value,
      confidence: $("confidence").value,
      reasoning: $("reasoning").value,
    });
  });
  fetchState();
  setInterval(fetchState, 700);
});
