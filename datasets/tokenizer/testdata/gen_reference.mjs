// gen_reference.mjs writes reference.json: token ids for a fixed set of
// strings, computed by an implementation independent of ours
// (@huggingface/transformers, the JavaScript port of Hugging Face
// tokenizers), loading each tokenizer.json from disk, no special tokens.
//
// Re-run (needs Node >= 18; nothing here downloads a model). ES modules do
// not read NODE_PATH, so run the script from the folder holding node_modules:
//
//   mkdir /tmp/tokref && cd /tmp/tokref && npm init -y &&
//     npm install --ignore-scripts @huggingface/transformers
//   cp $REPO/datasets/tokenizer/testdata/gen_reference.mjs . &&
//     node gen_reference.mjs /path/to/shared/data/tokenizers \
//     > $REPO/datasets/tokenizer/testdata/reference.json
//
// The tokenizers folder must hold qwen3/ and llama3/, each with
// tokenizer.json and tokenizer_config.json (see shared/data/README.md for
// where they come from). --ignore-scripts skips onnxruntime's native
// download, which tokenizing does not need.
//
// Strings avoid the few characters where the JavaScript regex engine and
// Oniguruma (used by the Rust library that servers run) disagree: U+0085 and
// U+FEFF (\s differs) and U+017F after an apostrophe ((?i) folding differs).
// Special tokens are left out too: transformers.js matches them in text,
// while our tokenizer, by design, reads them as plain characters.
import fs from 'node:fs';
import path from 'node:path';
import { PreTrainedTokenizer } from '@huggingface/transformers';

const root = process.argv[2];
if (!root) {
  console.error('usage: node gen_reference.mjs TOKENIZERS_DIR > reference.json');
  process.exit(2);
}

const cases = [
  ['empty', ''],
  ['ascii prose', 'The quick brown fox jumps over the lazy dog. It was, by all accounts, a remarkable leap!'],
  ['prose paragraph', 'In 1969, Neil Armstrong became the first person to walk on the Moon. "That\'s one small step for man," he said — and the world listened.\n\nDecades later, we still talk about it.'],
  ['contractions', "don't I'll we've they're she'd it's you'm DON'T I'LL WE'VE THEY'RE SHE'D IT'S O'Neil 'tis rock'n'roll"],
  ['contraction edges', "' 's 'S 'x '' ''s 're're 'LL 'Ll a'b 1's"],
  ['digits', '1 12 123 1234 12345 123456 1234567 12345678 3.14159 1,000,000 2024-06-01 0x1F 1e10 ½ ² ٣٤٥ ४२'],
  ['whitespace runs', 'a  b   c    d\te\t\tf\n\ng\r\nh \n i\n\n\n  j   \t \n k  '],
  ['only spaces', '        '],
  ['only newlines', '\n\n\n'],
  ['leading trailing', '  leading and trailing  '],
  ['tabs and mixed', '\t\tindented\n\t\t\tmore\n  \t  mixed\t \n'],
  ['crlf', 'line one\r\nline two\r\n\r\nline four\r'],
  ['punctuation', 'Hello, world!!! What?! (yes) [no] {maybe} <tag> a--b a...b "quoted" \'single\' #hash @at $5 %20 ^caret &amp; *star* ~tilde~ `code` |pipe| \\back/slash'],
  ['punct newline', 'end.\nnext;\n\nthen:\r\n --- \n...\n'],
  ['accents', 'Café naïve résumé façade jalapeño Übermensch Ærøskøbing São Paulo Kraków İstanbul'],
  ['decomposed accents', 'Cafe\u0301 nai\u0308ve re\u0301sume\u0301 A\u030a'],
  ['cjk', '你好，世界！今天天气很好。我们去公园散步吧。日本語のテキストも試します。한국어 문장도 있습니다.'],
  ['emoji', 'I love 🍕 and 🐍! 👍🏽 👨‍👩‍👧‍👦 family 🇫🇷 flag ❤️ heart ✅ done'],
  ['scripts', 'Привет, мир! Γειά σου Κόσμε! مرحبا بالعالم שלום עולם नमस्ते दुनिया สวัสดีชาวโลก'],
  ['unicode spaces', 'a\u00a0b\u3000c\u2003d\u2009e\u202ff  \u00a0 g'],
  ['symbols', '∑ ∫ √ ∞ ≠ ≤ ≥ → ← ⇒ © ® ™ € £ ¥ § ¶ • … ‰ ° ±'],
  ['python code', 'def fib(n: int) -> int:\n    """Return the n-th Fibonacci number."""\n    if n < 2:\n        return n\n    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n    return b\n\n\nprint(fib(10))  # 55\n'],
  ['go code', 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfor i := 0; i < 10; i++ {\n\t\tif i%2 == 0 {\n\t\t\tfmt.Printf("%d is even\\n", i)\n\t\t}\n\t}\n}\n'],
  ['json', '{"model": "qwen3", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 128, "stream": true}'],
  ['html', '<!DOCTYPE html>\n<html lang="en">\n  <body>\n    <p class="x">Hello&nbsp;<b>world</b></p>\n  </body>\n</html>'],
  ['url email', 'See https://example.com/path/to/page?query=1&b=two#frag or mail bob.smith+tag@example.org.'],
  ['markdown', '# Title\n\n- item one\n- item **two**\n\n1. first\n2. second\n\n```bash\n$ echo "hi"\n```\n\n> quote\n'],
  ['long word', 'Pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism supercalifragilisticexpialidocious'],
  ['long run letters', 'a'.repeat(120) + ' ' + 'ab'.repeat(70)],
  ['long run spaces', ' '.repeat(150) + 'x' + '\t'.repeat(60)],
  ['long run symbols', '='.repeat(100) + '\n' + '-*'.repeat(40) + '\n'],
  ['long number', '3141592653589793238462643383279502884197169399375105820974944592307816406286'],
  ['base64', 'QmFzZTY0IGVuY29kaW5nIGlzIGEgZ3JvdXAgb2YgYmluYXJ5LXRvLXRleHQgZW5jb2Rpbmcgc2NoZW1lcw=='],
  ['non-special added tokens', '<think>\nLet me think.\n</think>\n\nAnswer: 42 <tool_call>{"name": "f"}</tool_call><think></think>'],
  ['almost added', '<thinking> < think> <think <tool_call >'],
  ['mixed case words', 'iPhone eBay McDonald\'s HTTPServer camelCaseWord snake_case_word SCREAMING_CASE kebab-case'],
  ['apostrophe variants', 'it’s don’t ‘quoted’ «guillemets» „low“'],
  ['control chars', 'a\u0001b\u0007c\u001bd\u007fe\u000bf\u000cg'],
  ['zero width', 'zero\u200bwidth\u200cjoin\u200dhere\u2060x'],
  ['combining', 'Z\u0351\u036b\u0343a\u0362l\u0315g\u0334o a\u20dd'],
  ['math text', 'Let f(x) = 3x^2 + 2x - 5; then f\'(x) = 6x + 2, and f(2) = 11.'],
  ['numbers in words', 'abc123def 4ever x86_64 mp3 H2O 100km/h 3rd 21st'],
];

// Random strings over a pool of characters the pre-tokenizers treat
// differently (letters, digits, spaces of several kinds, newlines,
// apostrophes, contraction letters, combining marks, CJK, emoji), from a
// fixed-seed generator so that re-running gives the same cases.
const pool = [..."aZé你🍕1٣½ '\"\t\n\r.,!?-_=<>(){}[]#$%&*+/\\|~`^@:;sStTlLrReEvVdDmM\u00a0\u3000\u2028\u0301\u200d\u000b\u000c"];
let seed = 12345;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
for (let i = 0; i < 400; i++) {
  let s = '';
  const n = 1 + Math.floor(rnd() * 40);
  for (let j = 0; j < n; j++) s += pool[Math.floor(rnd() * pool.length)];
  cases.push([`random ${i}`, s]);
}

const out = { generator: 'gen_reference.mjs', library: '@huggingface/transformers', cases: [] };
const toks = {};
for (const name of ['qwen3', 'llama3']) {
  const dir = path.join(root, name);
  const tj = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
  const tc = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8'));
  toks[name] = new PreTrainedTokenizer(tj, tc);
}
for (const [name, text] of cases) {
  const c = { name, text };
  for (const [tn, tok] of Object.entries(toks)) {
    c[tn] = tok.encode(text, { add_special_tokens: false });
  }
  out.cases.push(c);
}
let s = JSON.stringify(out, null, 1);
// One case per few lines: keep id arrays on one line.
s = s.replace(/\[\n\s+([\d,\s]+?)\n\s+\]/g, (_, ids) => '[' + ids.replace(/\s+/g, '') + ']');
process.stdout.write(s + '\n');
