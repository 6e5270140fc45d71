//! What `grade --serve` adds to the scoreboard page: a status line (following the cluster, when
//! the data was last confirmed, a lost connection) and the script that applies updates pushed
//! as Server-Sent Events. Updates carry [`super::html::RowView`]s; the script sets attributes
//! and `textContent` only, as the page's own script does, so nothing from a cluster is parsed as
//! HTML. A changed cell is marked for a few seconds (`td.changed`). A cell's details are asked
//! of the server when the cell is opened (`cells.json`): a served page neither embeds nor is
//! pushed the details of a thousand learners.

use std::fmt::Write;

use super::escape::{esc, script_json};
use super::{ui, Scoreboard};

/// What a served page adds to the file's page: where its updates come from, and its script.
pub struct Live<'a> {
    /// The Server-Sent Events URL (relative, with the token's query when there is one).
    pub events: &'a str,
    /// Where a learner's cell details are asked for (relative, with the token's query when
    /// there is one): the page adds `learner=NAME`.
    pub details: &'a str,
    /// Links to the room document and a learner's detail carry this query (`?token=…`, or
    /// empty).
    pub query: &'a str,
}

/// The line under the page's header that says how live the board is.
pub(super) fn status_line(h: &mut String, board: &Scoreboard, live: &Live<'_>) {
    let lang = board.lang;
    let _ = writeln!(
        h,
        "<p class=\"live\"><span id=\"live-status\" data-state=\"live\">{}</span> · {}: <time id=\"live-confirmed\">{}</time> · <a href=\"room.json{}\">{}</a></p>",
        esc(ui("live-following", lang)),
        esc(ui("live-confirmed", lang)),
        esc(&board.graded_at),
        esc(live.query),
        esc(ui("live-room-json", lang)),
    );
}

/// The updates' script, after the page's own (which exposes `window.trainlabBoard`).
pub(super) fn script(h: &mut String, live: &Live<'_>, lang: crate::text::Lang) {
    // The words the script says, in the page's language, and where the events come from.
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"live-config\">{}</script>",
        script_json(&serde_json::json!({
            "events": live.events,
            "details": live.details,
            "lost": ui("live-lost", lang),
        }))
    );
    let _ = writeln!(h, "<style>{LIVE_CSS}</style>\n<script>{LIVE_JS}</script>");
}

const LIVE_CSS: &str = r#"
.live{color:#444;font-size:.9rem}
#live-status[data-state=lost],#live-status[data-state=cluster-lost]{color:#b3261e;font-weight:600}
#live-status[data-state=ended]{color:#666;font-weight:600}
td.cell.changed{animation:changed 4s ease-out}
@keyframes changed{0%{outline:4px solid #0b57d0;outline-offset:1px}100%{outline:0 solid transparent}}
"#;

const LIVE_JS: &str = r#"
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("live-config").textContent);
  var board = window.trainlabBoard;
  var status = document.getElementById("live-status");
  var confirmed = document.getElementById("live-confirmed");
  var table = document.getElementById("heatmap");

  function setCell(td, c) {
    td.className = "cell m-" + c.mark;
    td.dataset.cell = c.id;
    td.dataset.lab = c.lab;
    td.dataset.value = c.value;
    td.dataset.mark = c.mark;
    td.style.background = c.colour;
    td.title = c.title;
    td.textContent = c.text;
    td.tabIndex = 0;
    td.setAttribute("role", "button");
  }

  function newRow(row) {
    var tr = document.createElement("tr");
    tr.dataset.learner = row.learner;
    var th = document.createElement("th");
    th.scope = "row";
    th.dataset.value = row.learner;
    th.textContent = row.learner;
    tr.append(th);
    row.cells.forEach(function () { tr.append(document.createElement("td")); });
    var total = document.createElement("td");
    total.className = "total";
    tr.append(total);
    table.tBodies[0].append(tr);
    return tr;
  }

  function applyRow(row, changed) {
    var tr = Array.prototype.find.call(table.tBodies[0].rows, function (r) {
      return r.dataset.learner === row.learner;
    }) || newRow(row);
    var tds = tr.querySelectorAll("td:not(.total)");
    row.cells.forEach(function (c, i) {
      var td = tds[i];
      if (!td) return;
      var was = td.dataset.mark + "|" + td.textContent;
      setCell(td, c);
      board.forget(c.id);
      if (changed.indexOf(c.id) >= 0 || was !== c.mark + "|" + c.text) {
        td.classList.remove("changed");
        void td.offsetWidth;
        td.classList.add("changed");
      }
    });
    var total = tr.querySelector("td.total");
    total.dataset.value = row.total_value;
    total.textContent = row.total_text;
  }

  function say(state, text) {
    status.dataset.state = state;
    status.textContent = text;
  }

  // The version of the board the page shows: details older than it are asked for again.
  var shown = 0;
  board.load = function (id, done) {
    var learner = id.slice(0, id.lastIndexOf("/"));
    var sep = config.details.indexOf("?") >= 0 ? "&" : "?";
    fetch(config.details + sep + "learner=" + encodeURIComponent(learner), { cache: "no-store" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) return;
        if (d.version < shown) { board.load(id, done); return; }
        board.set(d.cells);
        done();
      })
      .catch(function () {});
  };

  var events = new EventSource(config.events);
  events.addEventListener("rows", function (e) {
    var u = JSON.parse(e.data);
    u.rows.forEach(function (row) { applyRow(row, u.changed || []); });
    (u.removed || []).forEach(function (learner) {
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        if (r.dataset.learner === learner) r.remove();
      });
    });
    document.getElementById("room-score").textContent = u.room_score;
    confirmed.textContent = u.confirmed;
    var graded = document.querySelector(".meta time");
    if (graded) graded.textContent = u.confirmed;
    document.body.dataset.version = u.version;
    shown = Math.max(shown, u.version);
  });
  events.addEventListener("status", function (e) {
    var s = JSON.parse(e.data);
    say(s.state, s.text);
    if (s.confirmed) confirmed.textContent = s.confirmed;
  });
  events.onopen = function () {
    if (status.dataset.state === "lost") say("live", status.dataset.liveText || status.textContent);
  };
  status.dataset.liveText = status.textContent;
  events.onerror = function () {
    if (status.dataset.state !== "ended") say("lost", config.lost);
  };
})();
"#;
