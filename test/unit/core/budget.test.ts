/**
 * The one --budget ledger (core/budget.ts) of gw probe, gw batch and gw load: holds, their release and settlement,
 * the refusal's words, whole millionths, currencies apart.
 */
import { describe, expect, it } from 'vitest';
import { BudgetLedger, isRefusal, type Hold, type Refusal } from '../../../src/core/budget.js';

function held(r: Hold | Refusal): Hold {
  if (isRefusal(r)) throw new Error(`refused: ${r.reason}`);
  return r;
}

function refused(r: Hold | Refusal): Refusal {
  if (!isRefusal(r)) throw new Error(`held ${r.amount}`);
  return r;
}

describe('BudgetLedger', () => {
  it('holds what fits and refuses what would pass the cap, saying so as the notes do', () => {
    const l = new BudgetLedger(new Map([['CNY', 5]]));
    const a = held(l.reserve('CNY', 2.7));
    expect(a).toMatchObject({ currency: 'CNY', amount: 2.7 });
    expect(l.spent('CNY')).toBe(2.7);
    const r = refused(l.reserve('CNY', 2.7));
    expect(r).toMatchObject({ currency: 'CNY', amount: 2.7, cap: 5, spent: 2.7 });
    expect(r.reason).toBe('CNY 2.70 would pass --budget CNY 5.00 (2.70 taken)');
    // Exactly up to the cap fits.
    held(l.reserve('CNY', 2.3));
    expect(l.spent('CNY')).toBe(5);
  });

  it('refuses a currency without a cap, and never asks to wait for it', () => {
    const l = new BudgetLedger(new Map([['CNY', 1]]));
    const r = refused(l.reserve('USD', 0.01));
    expect(r.reason).toBe('no --budget in USD');
    expect(r).toMatchObject({ cap: undefined, later: false });
  });

  it('release gives the room back; settle swaps the bound for the real spend; unknown keeps the bound', () => {
    const l = new BudgetLedger(new Map([['USD', 1]]));
    const a = held(l.reserve('USD', 0.6));
    l.release(a);
    expect(l.spent('USD')).toBe(0);
    const b = held(l.reserve('USD', 0.6));
    refused(l.reserve('USD', 0.6));
    l.settle(b, { currency: 'USD', amount: 0.012 });
    expect(l.spent('USD')).toBe(0.012);
    // The freed room admits what the bound alone refused.
    const c = held(l.reserve('USD', 0.6));
    l.settle(c, undefined);
    expect(l.spent('USD')).toBe(0.612);
    // A second ending of a hold changes nothing.
    l.release(c);
    l.settle(b, { currency: 'USD', amount: 0.5 });
    expect(l.spent('USD')).toBe(0.612);
  });

  it('counts a real spend above the bound in full, and keeps the bound for a spend in another currency', () => {
    const l = new BudgetLedger(new Map([['USD', 10]]));
    l.settle(held(l.reserve('USD', 1)), { currency: 'USD', amount: 1.5 });
    expect(l.spent('USD')).toBe(1.5);
    l.settle(held(l.reserve('USD', 1)), { currency: 'CNY', amount: 0.1 });
    expect(l.spent('USD')).toBe(2.5);
  });

  it('counts in whole millionths: no drift over many small amounts, cents stay exact', () => {
    const l = new BudgetLedger(new Map([['USD', 0.3]]));
    held(l.reserve('USD', 0.1));
    // 0.1 + 0.2 is 0.30000000000000004 in floating point: it still fits a cap of 0.3.
    held(l.reserve('USD', 0.2));
    expect(l.spent('USD')).toBe(0.3);
    const m = new BudgetLedger(new Map([['USD', 0.01]]));
    for (let i = 0; i < 10_000; i++) held(m.reserve('USD', 0.000001));
    expect(m.spent('USD')).toBe(0.01);
    refused(m.reserve('USD', 0.000001));
    // Below a millionth rounds to it.
    const n = new BudgetLedger(new Map([['USD', 1]]));
    held(n.reserve('USD', 0.0000004));
    expect(n.spent('USD')).toBe(0);
    held(n.reserve('USD', 0.0000006));
    expect(n.spent('USD')).toBe(0.000001);
  });

  it('keeps currencies apart, and totals shows each', () => {
    const l = new BudgetLedger(
      new Map([
        ['CNY', 3],
        ['USD', 0.05],
      ]),
    );
    held(l.reserve('CNY', 2.7));
    held(l.reserve('USD', 0.05));
    refused(l.reserve('USD', 0.000001));
    held(l.reserve('CNY', 0.3));
    expect(Object.fromEntries(l.totals)).toEqual({ CNY: 3, USD: 0.05 });
  });

  it('says when a refused amount may fit later: open holds that could end for less', async () => {
    const l = new BudgetLedger(new Map([['USD', 1]]));
    const a = held(l.reserve('USD', 0.7));
    expect(refused(l.reserve('USD', 0.5)).later).toBe(true);
    // Over the cap even were every open hold to end for nothing: never.
    expect(refused(l.reserve('USD', 1.2)).later).toBe(false);
    const changed = l.changed();
    l.settle(a, { currency: 'USD', amount: 0.6 });
    await changed;
    // Nothing open any more: the refusal is final.
    expect(refused(l.reserve('USD', 0.5)).later).toBe(false);
  });

  it('carry counts what earlier runs spent or left in flight, whatever the cap', () => {
    const l = new BudgetLedger(new Map([['CNY', 1]]));
    const inFlight = l.carry('CNY', 1.5);
    expect(l.spent('CNY')).toBe(1.5);
    expect(refused(l.reserve('CNY', 0.01)).later).toBe(true);
    l.settle(inFlight, { currency: 'CNY', amount: 0.5 });
    held(l.reserve('CNY', 0.5));
  });
});
