// The page's CPU corpus encoder (a module worker): the page's own wasm, whose main() finds no
// window and listens for corpora to encode (app/src/corpus_worker.rs). No extra download.
import init from './app.js';
init();
