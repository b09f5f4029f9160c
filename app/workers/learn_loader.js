// The learn-live worker (a module worker): loads the training wasm, a download made only when
// the user presses "Train" (app/src/learn.rs); its main() listens.
import init from './learn.js';
init();
