/**
 * deb822 text: parseControl (with and without comments allowed), then every paragraph written
 * back with serializeControl and parsed again must give the same fields.
 */
import { parseControl, parseControlStanza, serializeControl, type ControlStanza } from '../../src/domain/deb/control.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { expectOnly, invariant, syncTarget } from '../lib/harness.js';

const fields = (stanzas: ControlStanza[]) => JSON.stringify(stanzas.map((stanza) => stanza.toJSON()));

export const fuzz = syncTarget((data) => {
  const text = data.toString('utf8');
  for (const allowComments of [false, true]) {
    let stanzas: ControlStanza[];
    try {
      stanzas = parseControl(text, { allowComments, maxParagraphs: 1000 });
    } catch (error) {
      expectOnly(error, PackageFormatError);
      continue;
    }
    const written = serializeControl(stanzas);
    const again = parseControl(written);
    invariant(fields(again) === fields(stanzas), () => `round trip changed ${JSON.stringify(text.slice(0, 300))}`);
    for (const stanza of stanzas) {
      for (const { name } of stanza.fields) invariant(stanza.get(name.toUpperCase()) !== undefined, () => `field ${name} not found by another case`);
    }
  }
  try {
    parseControlStanza(text);
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
