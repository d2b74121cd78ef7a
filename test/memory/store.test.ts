import { createMemoryStore } from '../../src/memory/store.ts';
import { storeCases } from '../store/store.case.ts';

storeCases('memory', async () => createMemoryStore());
