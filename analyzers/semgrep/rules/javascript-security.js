const crypto = require('crypto');
const cp = require('child_process');
const serialize = require('node-serialize');

function codeInjection(input) {
  // ruleid: javascript-code-injection
  eval(input);
  // ruleid: javascript-code-injection
  const f = new Function('a', input);
  // ok: javascript-code-injection
  eval("1 + 1");
  return f;
}

function shell(name) {
  // ruleid: javascript-shell-injection
  cp.exec('ls ' + name);
  // ruleid: javascript-shell-injection
  require('child_process').execSync(`cat ${name}`);
  // ok: javascript-shell-injection
  cp.execFile('ls', [name]);
  // ok: javascript-shell-injection
  cp.exec('ls -l');
}

function sql(db, id) {
  // ruleid: javascript-sql-string-concat
  db.query("SELECT * FROM users WHERE id = " + id);
  // ruleid: javascript-sql-string-concat
  db.query(`DELETE FROM users WHERE id = ${id}`);
  // ok: javascript-sql-string-concat
  db.query("SELECT * FROM users WHERE id = ?", [id]);
}

function hashes(data) {
  // ruleid: javascript-weak-crypto
  crypto.createHash('md5').update(data);
  // ok: javascript-weak-crypto
  crypto.createHash('sha256').update(data);
}

function tls(https) {
  // ruleid: javascript-tls-verification-disabled
  https.request({ host: 'example.com', rejectUnauthorized: false });
  // ok: javascript-tls-verification-disabled
  https.request({ host: 'example.com' });
}

// ruleid: javascript-hardcoded-secret
const dbPassword = "hunter2";
// ok: javascript-hardcoded-secret
const password = process.env.PASSWORD;

function load(body) {
  // ruleid: javascript-unsafe-deserialization
  return serialize.unserialize(body);
}
