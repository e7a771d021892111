/**
 * Orders enriched from a customers table: `orders` (key the order id, value JSON with a customerId)
 * is re-keyed by customer (through a repartition topic, so each order meets its customer's
 * partition), left-joined with the `customers` table (key the customer id, value JSON), and written
 * to `orders-enriched`. An order whose customer is unknown keeps `customer: null`.
 */
import { Consumed, Produced, Serdes, StreamsBuilder } from '../streams/index.js';
import type { Topology } from '../streams/index.js';

export interface Order {
  orderId: string;
  customerId: string;
  item: string;
  amount: number;
}

export interface Customer {
  name: string;
  tier: string;
}

export const topology = (): Topology => {
  const builder = new StreamsBuilder();
  const customers = builder.table('customers', Consumed.with(Serdes.String(), Serdes.JSON<Customer>()));
  builder
    .stream('orders', Consumed.with(Serdes.String(), Serdes.JSON<Order>()))
    .filter((_orderId, order) => order !== null && typeof order.customerId === 'string')
    .selectKey((_orderId, order) => order.customerId)
    .leftJoin(customers, (order, customer) => ({ ...order, customer }))
    .to('orders-enriched', Produced.with(Serdes.String(), Serdes.JSON()));
  return builder.build();
};
