// JSHint kept running: its modules are loaded once, then each request is one JSHint run per file.
//
// Started by analyzers/crscore/smells/jshint.py with Node:
//     node jshint_server.js <jshint's src/jshint.js> <request bound in bytes>
// It prints "ready". Then, for each request line on stdin,
//     {"esversion": 11, "files": [{"code": "...", "module": false}, ...]}
// it lints each file as `jshint --config <{"esversion": .., "module": ..}> FILE` does (a byte
// order mark dropped) and answers one line, a list per file of JSHint's errors as its reporters
// get them:
//     {"results": [[{"line": 1, "col": 9, "code": "W033", "reason": "Missing semicolon."}], ...]}
// or {"error": "<message>"}. A request longer than the bound is answered with an error as soon
// as it passes the bound and the rest of its line is dropped unread. End of input ends it.
"use strict";

var JSHINT = require(process.argv[2]).JSHINT;
var limit = Number(process.argv[3]);

function lint(file, esversion) {
  var code = String(file.code).replace(/^\uFEFF/, "");
  var found = [];
  if (!JSHINT(code, { esversion: esversion, module: Boolean(file.module) })) {
    JSHINT.errors.forEach(function (e) {
      if (e) {
        found.push({ line: e.line, col: e.character, code: e.code, reason: e.reason });
      }
    });
  }
  return found;
}

function reply(answer) {
  process.stdout.write(JSON.stringify(answer) + "\n");
}

function answer(line) {
  try {
    var request = JSON.parse(line);
    reply({ results: request.files.map(function (f) { return lint(f, request.esversion); }) });
  } catch (e) {
    reply({ error: String((e && e.message) || e) });
  }
}

var pending = [];
var size = 0;
var skipping = false;

process.stdin.on("data", function (chunk) {
  var start = 0;
  for (;;) {
    var at = chunk.indexOf(10, start);
    var piece = chunk.subarray(start, at === -1 ? chunk.length : at);
    if (!skipping) {
      if (size + piece.length > limit) {
        reply({ error: "a request over " + limit + " bytes" });
        skipping = true;
        pending = [];
        size = 0;
      } else {
        pending.push(piece);
        size += piece.length;
      }
    }
    if (at === -1) {
      return;
    }
    if (!skipping) {
      answer(Buffer.concat(pending).toString("utf8"));
    }
    skipping = false;
    pending = [];
    size = 0;
    start = at + 1;
  }
});
process.stdin.on("end", function () {
  process.exit(0);
});
process.stdout.write("ready\n");
