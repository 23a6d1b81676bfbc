// The demo shop's catalogue: six products, each drawn as an inline SVG (no image files, nothing external).

export const BRAND = 'Field Goods';
export const CURRENCY = 'USD';

/** `price` is a number in USD; `id` is both the URL slug and the `product_id` sent with events. */
export const PRODUCTS = [
  {
    id: 'stoneware-mug',
    sku: 'FG-101-SND',
    name: 'Stoneware Mug',
    category: 'Kitchen',
    variant: 'Terracotta',
    price: 18,
    bg: '#f4e4d2',
    blurb: 'A hand-thrown 350 ml mug with a glaze that warms in the hand. Dishwasher safe, chip resistant, and sized for a proper pour.',
  },
  {
    id: 'pour-over-kettle',
    sku: 'FG-102-SLT',
    name: 'Pour-Over Kettle',
    category: 'Kitchen',
    variant: 'Slate',
    price: 64,
    bg: '#dfe7ef',
    blurb: 'A gooseneck kettle for slow, even pours. Works on gas, electric and induction; the lid stays put when you tip it.',
  },
  {
    id: 'single-origin-coffee',
    sku: 'FG-201-250',
    name: 'Single-Origin Coffee',
    category: 'Pantry',
    variant: '250 g, whole bean',
    price: 16.5,
    bg: '#e7eee0',
    blurb: 'Washed Ethiopian beans with notes of bergamot, apricot and black tea. Roasted in small batches every Monday.',
  },
  {
    id: 'canvas-tote',
    sku: 'FG-301-NAT',
    name: 'Canvas Tote',
    category: 'Bags',
    variant: 'Natural',
    price: 24,
    bg: '#f2ede3',
    blurb: 'Heavy 16 oz cotton canvas with long handles and an inside pocket. Carries a week of groceries or one very big book.',
  },
  {
    id: 'dot-grid-notebook',
    sku: 'FG-401-A5',
    name: 'Dot-Grid Notebook',
    category: 'Stationery',
    variant: 'A5, navy',
    price: 12,
    bg: '#e6e4f2',
    blurb: '192 numbered pages of 100 gsm paper that fountain pens love, bound to lie flat, with an elastic band and a ribbon.',
  },
  {
    id: 'desk-succulent',
    sku: 'FG-501-SM',
    name: 'Desk Succulent',
    category: 'Home',
    variant: 'Small, clay pot',
    price: 22,
    bg: '#e3efe8',
    blurb: 'An echeveria in a breathable clay pot. Needs a sunny window and a drink every two weeks, nothing more.',
  },
];

export const productById = (id) => PRODUCTS.find((p) => p.id === id);

// One drawing per product on a 240x180 canvas; `art(p)` wraps it with the product's background.
const DRAWINGS = {
  'stoneware-mug': `
    <ellipse cx="118" cy="152" rx="52" ry="7" fill="#000" opacity=".08"/>
    <circle cx="150" cy="102" r="21" fill="none" stroke="#b8603d" stroke-width="10"/>
    <rect x="78" y="62" width="72" height="90" rx="14" fill="#d77a52"/>
    <rect x="78" y="62" width="72" height="14" rx="7" fill="#b8603d"/>
    <rect x="88" y="84" width="8" height="52" rx="4" fill="#fff" opacity=".18"/>
    <path d="M100 50c-8-9 8-15 0-26M116 50c-8-9 8-15 0-26M132 50c-8-9 8-15 0-26" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round" opacity=".9"/>`,
  'pour-over-kettle': `
    <ellipse cx="122" cy="152" rx="58" ry="7" fill="#000" opacity=".08"/>
    <path d="M96 128C70 126 66 84 44 66" fill="none" stroke="#3b4754" stroke-width="8" stroke-linecap="round"/>
    <path d="M150 88c30 2 30 52 2 52" fill="none" stroke="#2a333d" stroke-width="9" stroke-linecap="round"/>
    <path d="M98 80h48l12 70H86z" fill="#3b4754"/>
    <rect x="86" y="138" width="72" height="12" rx="3" fill="#2a333d"/>
    <ellipse cx="122" cy="80" rx="28" ry="7" fill="#2a333d"/>
    <circle cx="122" cy="70" r="6" fill="#c9a15b"/>
    <rect x="104" y="92" width="6" height="40" rx="3" fill="#fff" opacity=".15"/>`,
  'single-origin-coffee': `
    <ellipse cx="120" cy="152" rx="54" ry="7" fill="#000" opacity=".08"/>
    <path d="M86 46h68l8 104H78z" fill="#8a5a3b"/>
    <rect x="84" y="38" width="72" height="14" rx="3" fill="#6d4530"/>
    <rect x="96" y="78" width="48" height="42" rx="5" fill="#f6efe6"/>
    <rect x="104" y="88" width="32" height="5" rx="2.5" fill="#8a5a3b"/>
    <rect x="108" y="98" width="24" height="4" rx="2" fill="#c7a889"/>
    <rect x="110" y="107" width="20" height="4" rx="2" fill="#c7a889"/>
    <g fill="#5b3826"><ellipse cx="62" cy="146" rx="8" ry="5.5" transform="rotate(-20 62 146)"/><ellipse cx="176" cy="144" rx="8" ry="5.5" transform="rotate(25 176 144)"/><ellipse cx="190" cy="152" rx="7" ry="5" transform="rotate(-10 190 152)"/></g>
    <g stroke="#3b2318" stroke-width="1.6" stroke-linecap="round"><path d="M57 148l10-4"/><path d="M172 141l8 6"/><path d="M185 153l10-2"/></g>`,
  'canvas-tote': `
    <ellipse cx="120" cy="154" rx="52" ry="6" fill="#000" opacity=".07"/>
    <path d="M98 74c0-40 44-40 44 0" fill="none" stroke="#a58656" stroke-width="7" stroke-linecap="round"/>
    <path d="M90 74c0-30 30-36 42-22" fill="none" stroke="#8d7046" stroke-width="6" stroke-linecap="round" opacity=".6"/>
    <path d="M74 72h92l-8 80H82z" fill="#e6d7b8" stroke="#cbb68c" stroke-width="2"/>
    <rect x="96" y="92" width="48" height="40" rx="4" fill="#22634a"/>
    <circle cx="120" cy="108" r="8" fill="#e3a35a"/>
    <path d="M102 126c6-6 12-6 18 0s12 6 18 0" fill="none" stroke="#f2ede3" stroke-width="3" stroke-linecap="round"/>`,
  'dot-grid-notebook': `
    <ellipse cx="122" cy="156" rx="50" ry="6" fill="#000" opacity=".08"/>
    <rect x="86" y="34" width="80" height="118" rx="6" fill="#f3f1ea"/>
    <rect x="80" y="30" width="80" height="118" rx="6" fill="#2f3a66"/>
    <rect x="144" y="30" width="7" height="118" fill="#1c2447"/>
    <rect x="94" y="50" width="40" height="16" rx="2" fill="#f0ede4"/>
    <path d="M118 148v12l5-4 5 4v-12" fill="#c9a15b"/>
    <g fill="#fff" opacity=".25"><circle cx="98" cy="86" r="1.8"/><circle cx="110" cy="86" r="1.8"/><circle cx="122" cy="86" r="1.8"/><circle cx="98" cy="98" r="1.8"/><circle cx="110" cy="98" r="1.8"/><circle cx="122" cy="98" r="1.8"/><circle cx="98" cy="110" r="1.8"/><circle cx="110" cy="110" r="1.8"/><circle cx="122" cy="110" r="1.8"/></g>`,
  'desk-succulent': `
    <ellipse cx="120" cy="154" rx="46" ry="6" fill="#000" opacity=".08"/>
    <g fill="#6aa97c"><ellipse cx="98" cy="88" rx="11" ry="26" transform="rotate(-48 98 88)"/><ellipse cx="142" cy="88" rx="11" ry="26" transform="rotate(48 142 88)"/><ellipse cx="120" cy="74" rx="11" ry="28"/></g>
    <g fill="#4e8d63"><ellipse cx="106" cy="92" rx="9" ry="20" transform="rotate(-25 106 92)"/><ellipse cx="134" cy="92" rx="9" ry="20" transform="rotate(25 134 92)"/><ellipse cx="120" cy="92" rx="8" ry="17"/></g>
    <path d="M94 112h52l-8 42h-36z" fill="#d4825f"/>
    <rect x="88" y="104" width="64" height="12" rx="3" fill="#bf6d4c"/>`,
};

/** The product's picture as inline SVG markup (decorative: the product name is always next to it). */
export function art(p, className = 'art') {
  return `<svg class="${className}" viewBox="0 0 240 180" aria-hidden="true" focusable="false" style="background:${p.bg}">${DRAWINGS[p.id] || ''}</svg>`;
}
