// <ifir-demo>: the instruction-following retrieval demo as a custom element for docs sites.
//
//   <script type="module" src="https://your.host/ifir/public/ifir-demo.js"></script>
//   <ifir-demo qid="q02" teach height="900px"></ifir-demo>
//   <ifir-demo qid="q02" train></ifir-demo>
//   <ifir-demo query="sourdough starter" instruction="Only forum posts from home bakers"
//              reversed="Only professional bakery guides"></ifir-demo>
//
// Attributes: qid (a demo example) or query / instruction / reversed; teach (teach mode); train
// (the learn-live panel: a "Train" button that fine-tunes the model in the page); model
// (a served model key); corpus; backend (cpu or webgpu; default: WebGPU when the browser has
// an adapter); height; src (the demo's index.html, default: next to this
// script's folder). The element renders the demo in an iframe, so the page needs no special
// headers (no COOP/COEP) and the demo's styles and scripts stay isolated from the docs page.
// Changing an attribute reloads the frame with the new state.
const PARAMS = { qid: 'qid', query: 'q', instruction: 'i', reversed: 'r', model: 'model', corpus: 'corpus', backend: 'backend' };

class IfirDemo extends HTMLElement {
  static get observedAttributes() {
    return ['src', 'teach', 'train', 'height', 'title', ...Object.keys(PARAMS)];
  }

  connectedCallback() {
    this.render();
  }

  attributeChangedCallback() {
    if (this.isConnected) this.render();
  }

  /** The demo URL for the current attributes. */
  url() {
    const base = this.getAttribute('src') || new URL('../index.html', import.meta.url).href;
    const url = new URL(base, document.baseURI);
    for (const [attr, param] of Object.entries(PARAMS)) {
      const value = this.getAttribute(attr);
      if (value !== null) url.searchParams.set(param, value);
    }
    if (this.hasAttribute('teach')) url.searchParams.set('teach', '1');
    if (this.hasAttribute('train')) url.searchParams.set('train', '1');
    return url.href;
  }

  render() {
    let frame = this.querySelector('iframe');
    if (!frame) {
      frame = document.createElement('iframe');
      frame.loading = 'lazy';
      this.appendChild(frame);
    }
    frame.title = this.getAttribute('title') || 'Instruction-following retrieval demo';
    frame.style.width = '100%';
    frame.style.border = '0';
    frame.style.height = this.getAttribute('height') || '900px';
    const url = this.url();
    if (frame.src !== url) frame.src = url;
  }
}

if (!customElements.get('ifir-demo')) customElements.define('ifir-demo', IfirDemo);
